#!/usr/bin/env bash
# The GPU figures of docs/performance.md ("GPU (H200)") in one run of about five minutes:
# network evaluations per second end to end and device-only (b10c128 in f16 and bf16 with
# each kind of inference kernels, the tiny net in f16), self-play on the shogi-b10c128
# preset against the raw forward pass, learner steps per second, and koma-usi's nodes per
# second in one game (a b10c128 network, by Threads and BatchSize), all on CUDA. Prints
# one Markdown table; the raw outputs go to the log folder.
#
# Needs only the release binaries on PATH (koma, koma-net next to it, koma-usi),
# LD_LIBRARY_PATH reaching libtorch (and its CUDA libraries) when the binaries' rpath
# does not, and configs/ (run from the repository root, or set KOMA_CONFIGS).
# No cargo, no Python.
#
# Usage: scripts/gpu-bench.sh [LOG_DIR]
#   DEVICE=cuda:1   another GPU (default cuda)
#   SECONDS_NN=2    seconds per batch size and mode of `koma bench nn`
#   SECONDS_SP=50   seconds of self-play (and as many of the raw forward pass)
#   SECONDS_LEARN=8 seconds per batch size of `koma bench learn`
#   USI_MS=4000     milliseconds of each koma-usi search
#   USI_SETTINGS="1x64 2x128 ..."  koma-usi's Threads x BatchSize to measure ("auto": the
#                   engine's own GPU defaults; "2@cuda,cuda": 2 threads on two copies)
#   PARTS="nn selfplay learn usi"  which measurements to run
set -uo pipefail

DEVICE="${DEVICE:-cuda}"
CONFIGS="${KOMA_CONFIGS:-configs}"
SECONDS_NN="${SECONDS_NN:-2}"
SECONDS_SP="${SECONDS_SP:-50}"
SECONDS_LEARN="${SECONDS_LEARN:-8}"
USI_MS="${USI_MS:-4000}"
USI_SETTINGS="${USI_SETTINGS:-auto 1x64 1x256 2x64 2x128 2x256 4x64 4x128 4x256 8x64 8x128 8x256 4x128@$DEVICE,$DEVICE 8x128@$DEVICE,$DEVICE}"
PARTS="${PARTS:-nn selfplay learn usi}"
part() { [[ " $PARTS " == *" $1 "* ]]; }
LOG="${1:-koma-gpu-bench-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$LOG"

die() { echo "gpu-bench: $*" >&2; exit 2; }
command -v koma >/dev/null || die "koma is not on PATH (put the release binaries' folder on PATH)"
[[ -f "$CONFIGS/shogi-b10c128.toml" && -f "$CONFIGS/shogi-tiny.toml" ]] ||
    die "no $CONFIGS/shogi-b10c128.toml: run from the repository root or set KOMA_CONFIGS"

rows=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 | $6 |"); }

# `koma bench nn`: columns batch, evals/s, ms/batch, device evals/s, device ms, and the
# largest difference of the policy logits and the WDL from the plain kernels'.
bench_nn() {
    local config="$1" precision="$2" batches="$3" kernels="$4" name
    name="nn-$(basename "$config" .toml)-$precision-$kernels"
    echo "== $name" >&2
    if timeout 120 koma bench nn --config "$config" --device "$DEVICE" --precision "$precision" \
        --kernels "$kernels" --batch "$batches" --seconds "$SECONDS_NN" >"$LOG/$name.txt" 2>"$LOG/$name.err"; then
        while read -r batch e2e ms dev devms pdiff wdiff; do
            [[ "$batch" =~ ^[0-9]+$ ]] || continue
            row "bench nn $(basename "$config" .toml), $kernels" "$precision" "$batch" \
                "$e2e evals/s ($ms ms)" "$dev evals/s ($devms ms)" \
                "end to end / device only; max diff from plain: policy $pdiff, WDL $wdiff"
        done <"$LOG/$name.txt"
    else
        row "bench nn $(basename "$config" .toml), $kernels" "$precision" "$batches" "failed" "" "see $LOG/$name.err"
    fi
}

# koma-usi in one game: one engine a device setting, a fresh tree for every search
# (`usinewgame`), a short warm-up search before each measured one (cuDNN tunes each new
# batch shape once), the root's checks off so that the time is the search's. Reads the
# `SearchStats` line: nodes, milliseconds, forward passes, leaves a pass, collisions.
usi_speed() {
    local model="$1" devices="$2" settings="$3" out="$4" s threads batch line
    coproc USI { koma-usi 2>&1; }
    local -a opts=("ModelFile value $model" "Device value $devices" "SearchStats value true"
        "RootMateNodes value 0" "RootTactics value 0" "InfoInterval value 0")
    send() { echo "$1" >&"${USI[1]}"; }
    wait_for() {  # prints the last line starting with $2 before a line starting with $1
        local found=""
        while IFS= read -r -t 300 line <&"${USI[0]}"; do
            echo "$line" >>"$out.log"
            [[ "$line" == "$2"* ]] && found="$line"
            [[ "$line" == "$1"* ]] && { echo "$found"; return 0; }
        done
        return 1
    }
    send usi
    for o in "${opts[@]}"; do send "setoption name $o"; done
    send isready
    wait_for readyok "info string search:" >/dev/null || { kill "$USI_PID"; return 1; }
    for s in $settings; do
        threads="${s%x*}" batch="${s#*x}"
        [[ "$s" == auto ]] && threads=0 batch=0
        send "setoption name Threads value $threads"
        send "setoption name BatchSize value $batch"
        for ms in 500 "$USI_MS"; do
            send usinewgame
            send "position startpos moves 7g7f 3c3d"
            send "go movetime $ms"
            line="$(wait_for bestmove "info string search stats:")" || { kill "$USI_PID"; return 1; }
        done
        echo "$s $line" >>"$out"
    done
    send quit
    wait "$USI_PID" 2>/dev/null
}

usi_rows() {
    local model="$LOG/usi-b10c128" setting devices settings out
    echo "== usi" >&2
    if ! koma init --config "$CONFIGS/shogi-b10c128.toml" --out "$model" >"$LOG/usi-init.txt" 2>&1; then
        row "koma-usi shogi-b10c128" "auto (f16)" "" "failed" "" "see $LOG/usi-init.txt"
        return
    fi
    # Group the settings by their devices: one engine each.
    declare -A by_devices=()
    for setting in $USI_SETTINGS; do
        devices="$DEVICE"
        [[ "$setting" == *@* ]] && devices="${setting#*@}" setting="${setting%@*}"
        by_devices[$devices]+="$setting "
    done
    for devices in "${!by_devices[@]}"; do
        settings="${by_devices[$devices]}"
        out="$LOG/usi-$(tr -c 'a-z0-9\n' '_' <<<"$devices")"
        : >"$out"
        if ! usi_speed "$model" "$devices" "$settings" "$out"; then
            row "koma-usi shogi-b10c128 on $devices" "auto (f16)" "" "failed" "" "see $out.log"
        fi
        # "<setting> info string search stats: N nodes in T ms, P forward passes, M leaves a pass (largest L), C collisions"
        while read -r setting _ _ _ _ nodes _ _ ms _ passes _ _ mean _ _ _ _ _ collisions _; do
            local nps=$(( nodes * 1000 / (ms > 0 ? ms : 1) ))
            row "koma-usi shogi-b10c128 on $devices" "auto (f16)" "$setting (Threads x BatchSize)" \
                "$nps nodes/s ($nodes in $ms ms)" "$passes forward passes, $mean leaves a pass" \
                "$collisions collisions"
        done <"$out"
    done
}

{
    echo "# $(date -u +%FT%TZ) $(uname -n)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    koma --version
} >"$LOG/system.txt" 2>&1
cat "$LOG/system.txt" >&2

if part nn; then
    for kernels in plain channels-last cudnn-fused; do
        bench_nn "$CONFIGS/shogi-b10c128.toml" f16 64,256,1024,2048 "$kernels"
    done
    bench_nn "$CONFIGS/shogi-b10c128.toml" bf16 256,1024 plain
    bench_nn "$CONFIGS/shogi-b10c128.toml" bf16 256,1024 cudnn-fused
    bench_nn "$CONFIGS/shogi-tiny.toml" f16 64,256,1024 plain
    bench_nn "$CONFIGS/shogi-tiny.toml" f16 64,256,1024 cudnn-fused
fi

part selfplay && {
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
}

part learn && {
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
}

part usi && usi_rows

{
    echo
    sed 's/^/    /' "$LOG/system.txt"
    echo
    echo "| measurement | precision | batch | result | beside it | note |"
    echo "|---|---|---:|---|---|---|"
    printf '%s\n' "${rows[@]}"
} | tee "$LOG/table.md"
