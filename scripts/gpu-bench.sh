#!/usr/bin/env bash
# The GPU figures of docs/performance.md ("GPU (H200)") in one run of about five minutes:
# network evaluations per second end to end and device-only (b10c128 in f16 and bf16, the
# tiny net in f16), self-play on the shogi-b10c128 preset against the raw forward pass,
# and learner steps per second, all on CUDA. Prints one Markdown table; the raw outputs
# go to the log folder.
#
# Needs only the release binaries on PATH (koma, koma-net next to it; koma-usi is not
# used), LD_LIBRARY_PATH reaching libtorch (and its CUDA libraries) when the binaries'
# rpath does not, and configs/ (run from the repository root, or set KOMA_CONFIGS).
# No cargo, no Python.
#
# Usage: scripts/gpu-bench.sh [LOG_DIR]
#   DEVICE=cuda:1   another GPU (default cuda)
#   SECONDS_NN=2    seconds per batch size and mode of `koma bench nn`
#   SECONDS_SP=50   seconds of self-play (and as many of the raw forward pass)
#   SECONDS_LEARN=8 seconds per batch size of `koma bench learn`
set -uo pipefail

DEVICE="${DEVICE:-cuda}"
CONFIGS="${KOMA_CONFIGS:-configs}"
SECONDS_NN="${SECONDS_NN:-2}"
SECONDS_SP="${SECONDS_SP:-50}"
SECONDS_LEARN="${SECONDS_LEARN:-8}"
LOG="${1:-koma-gpu-bench-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$LOG"

die() { echo "gpu-bench: $*" >&2; exit 2; }
command -v koma >/dev/null || die "koma is not on PATH (put the release binaries' folder on PATH)"
[[ -f "$CONFIGS/shogi-b10c128.toml" && -f "$CONFIGS/shogi-tiny.toml" ]] ||
    die "no $CONFIGS/shogi-b10c128.toml: run from the repository root or set KOMA_CONFIGS"

rows=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 | $6 |"); }

# `koma bench nn`: columns batch, evals/s, ms/batch, device evals/s, device ms.
bench_nn() {
    local config="$1" precision="$2" batches="$3" name
    name="nn-$(basename "$config" .toml)-$precision"
    echo "== $name" >&2
    if timeout 120 koma bench nn --config "$config" --device "$DEVICE" --precision "$precision" \
        --batch "$batches" --seconds "$SECONDS_NN" >"$LOG/$name.txt" 2>"$LOG/$name.err"; then
        while read -r batch e2e ms dev devms; do
            [[ "$batch" =~ ^[0-9]+$ ]] || continue
            row "bench nn $(basename "$config" .toml)" "$precision" "$batch" \
                "$e2e evals/s ($ms ms)" "$dev evals/s ($devms ms)" "end to end / device only"
        done <"$LOG/$name.txt"
    else
        row "bench nn $(basename "$config" .toml)" "$precision" "$batches" "failed" "" "see $LOG/$name.err"
    fi
}

{
    echo "# $(date -u +%FT%TZ) $(uname -n)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    koma --version
} >"$LOG/system.txt" 2>&1
cat "$LOG/system.txt" >&2

bench_nn "$CONFIGS/shogi-b10c128.toml" f16 64,256,512,1024,2048
bench_nn "$CONFIGS/shogi-b10c128.toml" bf16 256,1024
bench_nn "$CONFIGS/shogi-tiny.toml" f16 64,256,1024

echo "== selfplay" >&2
sp="$LOG/selfplay-shogi-b10c128.txt"
if timeout 300 koma bench selfplay --config "$CONFIGS/shogi-b10c128.toml" --device "$DEVICE" \
    --seconds "$SECONDS_SP" --warmup 5 --rounds 2 >"$sp" 2>"$LOG/selfplay.err"; then
    summary="$(grep '^selfplay:' "$sp" | tail -1)"
    last="$(tail -1 "$sp")"
    # "selfplay: X evals/s, mean batch B, P positions/s, F forward passes/s"
    evals="$(sed -E 's/^selfplay: ([0-9.]+) evals\/s.*/\1/' <<<"$summary")"
    batch="$(sed -E 's/.*mean batch ([0-9.]+).*/\1/' <<<"$summary")"
    positions="$(sed -E 's/.*, ([0-9.]+) positions\/s.*/\1/' <<<"$summary")"
    raw="$(sed -E 's/.*vs raw ([0-9.]+) evals\/s.*/\1/' <<<"$last")"
    ratio="$(sed -E 's/.*ratio ([0-9.]+).*/\1/' <<<"$last")"
    busy="$(grep '^network busy' "$sp" | sed -E 's/^network busy ([0-9.]+%).*/\1/')"
    row "bench selfplay shogi-b10c128" "auto (f16)" "$batch (mean)" "$evals evals/s, $positions positions/s" \
        "raw $raw evals/s" "ratio $ratio, network busy $busy"
else
    row "bench selfplay shogi-b10c128" "auto (f16)" "" "failed" "" "see $LOG/selfplay.err"
fi

echo "== learn" >&2
learn="$LOG/learn-shogi-b10c128.txt"
if timeout 150 koma bench learn --config "$CONFIGS/shogi-b10c128.toml" --device "$DEVICE" \
    --batch 256,512,1024 --seconds "$SECONDS_LEARN" >"$learn" 2>"$LOG/learn.err"; then
    while read -r batch steps positions encoded; do
        [[ "$batch" =~ ^[0-9]+$ ]] || continue
        row "bench learn shogi-b10c128" "auto (f16 autocast)" "$batch" "$steps steps/s" \
            "$positions positions/s" "loader encodes $encoded batches/s"
    done <"$learn"
else
    row "bench learn shogi-b10c128" "auto" "" "failed" "" "see $LOG/learn.err"
fi

{
    echo
    sed 's/^/    /' "$LOG/system.txt"
    echo
    echo "| measurement | precision | batch | result | beside it | note |"
    echo "|---|---|---:|---|---|---|"
    printf '%s\n' "${rows[@]}"
} | tee "$LOG/table.md"
