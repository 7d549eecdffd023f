#!/usr/bin/env bash
# koma-usi's search speed as a GUI runs it: the nodes per second of the last `info` line
# of `go movetime MS`, for each network and engine setting, one engine at a time. Run it
# on a quiet machine: it measures the machine as much as the engine.
#
#   scripts/engine-speed.sh [--movetime MS] [--repeat R] [--threads "1 2"] [--batch "8 16 32"]
#                           [--torch "1 2"] [--backend "torch cpu"] [VARIANT=MODEL ...]
#
# Defaults: 5,000 ms, 3 repeats (the median is printed), Threads 1 and 2, BatchSize 8, 16
# and 32, TorchThreads 1 and 2, Backend auto, and the shipped networks
# (models/<variant>.safetensors). 0 is the engine's own default for the first three.
# The position: standard shogi after 7g7f 3c3d; sho and dai from the start. Each repeat
# is a fresh engine (`usinewgame`, an empty tree). Output: one table row a setting.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
source scripts/env.sh
usi="${KOMA_USI:-target/release/koma-usi}"

movetime=5000
repeat=3
threads_list="1 2"
batch_list="8 16 32"
torch_list="1 2"
backend_list="auto"
networks=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --movetime) movetime="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --threads) threads_list="$2"; shift 2 ;;
        --batch) batch_list="$2"; shift 2 ;;
        --torch) torch_list="$2"; shift 2 ;;
        --backend) backend_list="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *=*) networks+=("$1"); shift ;;
        *) echo "engine-speed.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ ${#networks[@]} -gt 0 ]] || networks=(shogi=models/shogi.safetensors sho=models/sho.safetensors dai=models/dai.safetensors)
[[ -x "$usi" ]] || cargo build --release -p koma-usi >&2

# Nodes per second of one `go movetime` by a fresh engine.
measure() {
    local variant="$1" model="$2" threads="$3" batch="$4" torch="$5" backend="$6" line info=""
    local moves=""
    [[ "$variant" == shogi ]] && moves=" moves 7g7f 3c3d"
    coproc ENGINE { "$usi" 2>/dev/null; }
    local to="${ENGINE[1]}" from="${ENGINE[0]}"
    printf '%s\n' usi "setoption name UCI_Variant value $variant" "setoption name ModelFile value $model" \
        "setoption name Threads value $threads" "setoption name BatchSize value $batch" \
        "setoption name TorchThreads value $torch" "setoption name Backend value $backend" isready >&"$to"
    while read -r -t 120 line <&"$from"; do
        [[ "$line" == "info string error"* ]] && { echo "engine-speed.sh: $line" >&2; exit 1; }
        [[ "$line" == readyok ]] && break
    done
    printf '%s\n' usinewgame "position startpos$moves" "go movetime $movetime" >&"$to"
    while read -r -t 120 line <&"$from"; do
        [[ "$line" == info*" nps "* ]] && info="$line"
        [[ "$line" == bestmove* ]] && break
    done
    printf 'quit\n' >&"$to"
    wait "$ENGINE_PID" 2>/dev/null || true
    [[ -n "$info" ]] || { echo "engine-speed.sh: no info line from $variant $threads/$batch/$torch/$backend" >&2; exit 1; }
    sed -E 's/.* nps ([0-9]+).*/\1/' <<<"$info"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "| network | Backend | Threads | BatchSize | TorchThreads | nodes/s (median of $repeat, go movetime $movetime) | all |"
echo "|---|---|---:|---:|---:|---:|---|"
for net in "${networks[@]}"; do
    variant="${net%%=*}" model="${net#*=}"
    for threads in $threads_list; do
        for batch in $batch_list; do
            for torch in $torch_list; do
                for backend in $backend_list; do
                    runs=()
                    for _ in $(seq "$repeat"); do runs+=("$(measure "$variant" "$model" "$threads" "$batch" "$torch" "$backend")"); done
                    echo "| $variant ($(basename "$model")) | $backend | $threads | $batch | $torch | $(printf '%s\n' "${runs[@]}" | median) | ${runs[*]} |"
                done
            done
        done
    done
done
