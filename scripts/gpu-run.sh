#!/usr/bin/env bash
# A short training run from zero on one GPU, for a window of about ten minutes of GPU time:
# `koma train` for a fixed number of minutes (default 8) on configs/shogi-gpu-short.toml,
# its checkpoints (about one a minute) and logs in one output folder. docs/gpu-run.md has
# the preset's budget arithmetic and the commands.
#
# Needs only the release binaries (koma, koma-net next to it) and configs/; no cargo, no
# Python. The binaries are taken from PATH, else from gpu-bin/ or target/release/ of this
# checkout (KOMA_BIN=DIR names their folder); when LD_LIBRARY_PATH is unset and python3
# imports torch, LD_LIBRARY_PATH is set to that torch's lib/ (binaries built elsewhere,
# as scripts/gpu-bench.sh runs them).
#
# Usage: scripts/gpu-run.sh [--minutes N] [--config FILE] [--out DIR] [--device cuda|cpu]
#                           [--set TABLE.KEY=VALUE ...] [--smoke] [--bundle MIB] [--keep-samples]
#   --minutes N     minutes of training (koma train --max-minutes; default 8)
#   --config FILE   the preset (default configs/shogi-gpu-short.toml)
#   --out DIR       the output folder (default $OUT when set, else runs/gpu-run-<date-time>)
#   --device D      cuda (default), cuda:N or cpu: the self-play and learner device
#   --set T.K=V     override one setting of the preset in the run's copy of it (TOML value:
#                   --set selfplay.workers=12, --set 'train.lr_schedule="cosine"'); repeatable
#   --smoke         a plumbing check sized for a small CPU and a minute (one worker of 8
#                   games, 8 and 4 simulations, games cut at 60 plies, batches of 32,
#                   a checkpoint every 10 steps): checkpoints and logs, not a network
#   --bundle MIB    for a machine from which only a few files come back: the run goes to a
#                   scratch folder and the output folder gets summary.txt, train.log and
#                   run.tar.NN parts (15 MiB each, MIB in all): the run's small files, the
#                   last checkpoint and as many earlier networks as fit, newest first
#   --keep-samples  keep the run's sample chunks (deleted at the end otherwise: they are
#                   most of the run's bytes; `koma train --resume` needs them)
#
# Output folder:
#   summary.txt   what ran (command, device, binaries, GPU), how it ended, the checkpoints
#   train.log     koma train's output (its progress line every 30 s, its summary line)
#   config.toml   the preset as run (with the overrides)
#   run/          the run (dataio::run_layout): checkpoints/ (ckpt-<step> every
#                 train.checkpoint_interval steps), models/, tb/ (TensorBoard), state.json
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "gpu-run: $*" >&2; exit 2; }

minutes=8
config="$ROOT/configs/shogi-gpu-short.toml"
out="${OUT:-}"
device=cuda
smoke=0
bundle=0
keep_samples=0
sets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --minutes) minutes="${2:-}"; shift 2 || die "--minutes needs a value" ;;
        --config) config="${2:-}"; shift 2 || die "--config needs a value" ;;
        --out) out="${2:-}"; shift 2 || die "--out needs a value" ;;
        --device) device="${2:-}"; shift 2 || die "--device needs a value" ;;
        --set) sets+=("${2:-}"); shift 2 || die "--set needs a value" ;;
        --smoke) smoke=1; shift ;;
        --bundle) bundle="${2:-}"; shift 2 || die "--bundle needs a value" ;;
        --keep-samples) keep_samples=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v m="$minutes" 'BEGIN { exit !(m > 0) }' ||
    die "--minutes must be a positive number of minutes, not '$minutes'"
[[ "$bundle" =~ ^[0-9]+$ ]] || die "--bundle must be a number of MiB, not '$bundle'"
[[ -f "$config" ]] || die "no config file '$config'"
case "$device" in
    cpu|cuda|cuda:[0-9]*) ;;
    *) die "--device must be cuda, cuda:N or cpu, not '$device'" ;;
esac

# The binaries: PATH, then KOMA_BIN, gpu-bin/ and target/release/ of this checkout.
bin=""
if [[ -n "${KOMA_BIN:-}" ]]; then
    bin="$KOMA_BIN"
elif command -v koma >/dev/null; then
    bin="$(dirname "$(command -v koma)")"
else
    for d in "$ROOT/gpu-bin" "$ROOT/target/release"; do
        [[ -x "$d/koma" ]] && { bin="$d"; break; }
    done
fi
[[ -n "$bin" && -x "$bin/koma" ]] ||
    die "no koma binary (put the release binaries' folder on PATH or in KOMA_BIN, or build them: cargo build --release -p koma -p koma-net)"
[[ -x "$bin/koma-net" ]] || die "no koma-net beside $bin/koma (koma hands its network commands to it)"
koma="$bin/koma"
if [[ -z "${LD_LIBRARY_PATH:-}" ]] && command -v python3 >/dev/null; then
    torch_lib="$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null || true)"
    [[ -n "$torch_lib" && -d "$torch_lib" ]] && export LD_LIBRARY_PATH="$torch_lib"
fi

# A CUDA run needs a GPU: say so before anything is written.
gpu=""
if [[ "$device" == cuda* ]]; then
    command -v nvidia-smi >/dev/null ||
        die "--device $device but no GPU here (no nvidia-smi); for a CPU check: --device cpu --smoke --minutes 1"
    gpu="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)" ||
        die "--device $device but nvidia-smi finds no GPU: $gpu"
    [[ -n "$gpu" ]] || die "--device $device but nvidia-smi lists no GPU"
fi

if [[ -z "$out" ]]; then
    out="$ROOT/runs/gpu-run-$(date -u +%Y%m%d-%H%M%S)"
fi
mkdir -p "$out" || die "cannot make the output folder '$out'"
out="$(cd "$out" && pwd)"
[[ -e "$out/run" || -e "$out/summary.txt" ]] && die "'$out' already holds a run: give another --out"
if (( bundle > 0 )); then
    work="$(mktemp -d "${TMPDIR:-/tmp}/koma-gpu-run.XXXXXX")" || die "no scratch folder"
else
    work="$out"
fi

# The run's copy of the preset: the device, the smoke overrides, then --set.
# set_key TABLE KEY VALUE FILE: replaces KEY's line in [TABLE] (TABLE "" = the top level),
# or adds it at the end of the table (the table at the end of the file when missing).
set_key() {
    awk -v table="$1" -v key="$2" -v value="$3" '
        function emit() { print key " = " value; done = 1 }
        /^[ \t]*\[/ {
            if (cur == table && !done) emit()
            cur = $0; sub(/^[ \t]*\[[ \t]*/, "", cur); sub(/[ \t]*\].*$/, "", cur)
        }
        {
            line = $0
            if (cur == table && !done && line ~ "^[ \t]*" key "[ \t]*=") { emit(); next }
            print
        }
        END {
            if (!done) { if (table != "" && cur != table) print "[" table "]"; emit() }
        }' "$4" >"$4.tmp" && mv "$4.tmp" "$4"
}
run_config="$work/config.toml"
cp "$config" "$run_config" || die "cannot copy $config"
set_key selfplay device "\"$device\"" "$run_config"
if (( smoke )); then
    for kv in selfplay.workers=1 selfplay.games_per_worker=8 selfplay.max_batch=8 \
        selfplay.simulations_full=8 selfplay.simulations_cheap=4 search.gumbel_m=4 \
        selfplay.max_plies=60 selfplay.samples_per_chunk=128 train.batch_size=32 \
        train.min_replay=256 train.warmup_steps=10 train.checkpoint_interval=10 train.log_interval=5; do
        sets=("$kv" "${sets[@]}")
    done
fi
for kv in "${sets[@]}"; do
    [[ "$kv" =~ ^([A-Za-z_]+[.])?[A-Za-z_]+=.+$ ]] || die "--set wants TABLE.KEY=VALUE, not '$kv'"
    path="${kv%%=*}" value="${kv#*=}"
    if [[ "$path" == *.* ]]; then table="${path%%.*}" key="${path#*.}"; else table="" key="$path"; fi
    set_key "$table" "$key" "$value" "$run_config"
done

cmd=("$koma" train --config "$run_config" --runs-dir "$work" --run run --max-minutes "$minutes")
started="$(date -u +%FT%TZ)"
{
    echo "# scripts/gpu-run.sh, $started on $(uname -n)"
    echo "preset:   $config$( ((smoke)) && echo ' (smoke overrides)')${sets[*]:+; overrides: ${sets[*]}}"
    echo "device:   $device${gpu:+ ($gpu)}"
    echo "binaries: $bin ($("$koma" --version 2>&1))"
    echo "minutes:  $minutes"
    echo "command:  ${cmd[*]}"
} >"$out/summary.txt"
cat "$out/summary.txt" >&2
echo "gpu-run: output in $out (train.log, run/; TensorBoard: tensorboard --logdir $work/run/tb)" >&2

SECONDS=0
# stderr (the progress line, every 30 s off a terminal) to the screen and train.log;
# stdout (the summary line) to train.log.
"${cmd[@]}" >>"$out/train.log" 2> >(tee -a "$out/train.log" >&2)
status=$?
wall=$SECONDS
[[ -n "${!:-}" ]] && wait "$!" 2>/dev/null; sleep 0.2  # tee's last lines

line="$(grep -E '^koma train: .* after [0-9.]+ min: step' "$out/train.log" | tail -1)"
mapfile -t ckpts < <(cd "$work/run" 2>/dev/null && ls checkpoints/*.safetensors 2>/dev/null | grep -v '\.optim\.' | sort)
last="$(sed -n 's/.*"checkpoint": *"\([^"]*\)".*/\1/p' "$work/run/state.json" 2>/dev/null | head -1)"
if (( ! keep_samples )) && [[ -d "$work/run/samples" ]]; then
    samples="$(du -sh "$work/run/samples" 2>/dev/null | cut -f1)"
    rm -rf "$work/run/samples"
    samples_note="deleted ($samples; --keep-samples keeps them)"
else
    samples_note="kept in run/samples"
fi
{
    echo "exit:     $status after $wall s"
    echo "result:   ${line:-(no summary line: see train.log)}"
    echo "last:     ${last:-none}"
    echo "samples:  $samples_note"
    echo "checkpoints (${#ckpts[@]}):"
    for c in "${ckpts[@]}"; do echo "  $c"; done
} >>"$out/summary.txt"

if (( bundle > 0 )); then
    # The run's small files, the last checkpoint whole, then the networks of earlier
    # checkpoints newest first while they fit; in parts of 15 MiB.
    budget=$(( bundle * 1024 * 1024 - 64 * 1024 ))
    list="$work/bundle.list"
    (cd "$work" && find run -type f -size -256k ! -name '*.safetensors' | sort) >"$list"
    bytes() { (cd "$work" && xargs -d '\n' -r stat -c %s | awk '{ s += $1 } END { print s + 0 }'); }
    used=$(bytes <"$list")
    take() {  # take FILE...: all of them if they fit
        local size
        size=$(printf '%s\n' "$@" | bytes)
        (( used + size <= budget )) || return 1
        used=$(( used + size ))
        printf '%s\n' "$@" >>"$list"
    }
    bundled=()
    if [[ -n "$last" ]]; then
        mapfile -t whole < <(cd "$work" && ls run/"$last".*)
        take "${whole[@]}" && bundled+=("$last (whole)")
    fi
    for (( i = ${#ckpts[@]} - 1; i >= 0; i-- )); do
        m="run/models/$(basename "${ckpts[$i]}")"
        [[ "run/$last.safetensors" == "run/${ckpts[$i]}" || ! -f "$work/$m" ]] && continue
        take "$m" && bundled+=("${m#run/}")
    done
    sort -u "$list" -o "$list"
    (cd "$work" && tar -cf - -T "$list") | split -b 15M -d -a 2 - "$out/run.tar."
    {
        echo "bundle:   $(ls "$out"/run.tar.* | wc -l) parts, $(( used / 1024 / 1024 )) MiB: cat run.tar.* | tar -x"
        for b in "${bundled[@]}"; do echo "  $b"; done
        echo "the whole run stays in $work"
    } >>"$out/summary.txt"
fi

echo >&2
sed -n '/^exit:/,$p' "$out/summary.txt" >&2
if (( status != 0 )); then
    echo "gpu-run: koma train failed (exit $status): see $out/train.log" >&2
    exit "$status"
fi
# A run that trained no step, or logged nothing, failed.
[[ -n "$last" && "$last" != *ckpt-00000000 ]] ||
    { echo "gpu-run: the run saved no trained checkpoint: see $out/train.log" >&2; exit 1; }
[[ -n "$(ls "$work/run/tb" 2>/dev/null)" ]] ||
    { echo "gpu-run: the run wrote no TensorBoard log: see $out/train.log" >&2; exit 1; }
