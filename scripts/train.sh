#!/usr/bin/env bash
# The main job: a small self-play training run of standard shogi on the CPU.
#
# On a fresh machine this sets everything up (.venv with the pinned torch wheel, via
# scripts/env.sh), builds `koma` (and `koma-net`, which runs its network commands) in
# release mode and runs
#   koma train --config configs/shogi-tiny.toml --run <date-time> [your flags]
# which plays self-play games and trains the network in one process for 25 minutes
# (train.max_minutes), then rates four checkpoints spread over the run (eval.at_end_points,
# the last the final network) on the ladder of arena/ladder.toml: each, searching as
# koma-usi does at 800 nodes a move, plays a few games against the rungs just above and
# just below it (eval.opponents = ["ladder"]; about 20 games, about 3 minutes on two idle
# cores, eval.at_end). It ends with a one-line summary that names each rating with its 95%
# interval ("ladder Elo by step"), which elo.png plots against the training step.
#
# The rungs from fsf1 up are Debian engines (Fairy-Stockfish, GNU Shogi, GPS Shogi);
# without them the ladder stops at material3, which the network passes, and its rating
# has no upper bound: scripts/install-engines.sh installs them (this script says so).
#
#   scripts/train.sh                              # a new run named after the date
#   scripts/train.sh --run demo                   # a named run (runs/demo/)
#   scripts/train.sh --run demo --resume          # continue it after Ctrl-C or a crash
#   scripts/train.sh --config configs/shogi-b10c128.toml --max-minutes 0   # a GPU run
#
# Ctrl-C saves a checkpoint and stops. Output: runs/<name>/ (checkpoints, samples,
# TensorBoard logs in tb/, evaluation results in eval.jsonl, the rating plot elo.png).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
source scripts/env.sh
cargo build --release -p koma -p koma-net >&2

config="configs/shogi-tiny.toml"
run=""
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --config) config="$2"; shift 2 ;;
        --config=*) config="${1#--config=}"; shift ;;
        --run) run="$2"; shift 2 ;;
        --run=*) run="${1#--run=}"; shift ;;
        *) args+=("$1"); shift ;;
    esac
done
if [[ -z "$run" ]]; then
    run="$(date -u +%Y%m%d-%H%M%S)"
fi
engines_hint() {
    if [[ ! -x /usr/games/fairy-stockfish ]]; then
        echo "train.sh: Fairy-Stockfish is not installed, so the evaluation's ladder stops at material3;" \
            "scripts/install-engines.sh installs the engines of the rungs above (fsf1, gnushogi1, ...)" >&2
    fi
}
engines_hint
echo "train.sh: run '$run' with $config; logs in runs/$run/tb" >&2
echo "train.sh: view them with: scripts/tensorboard.sh   (then open http://localhost:6006)" >&2
status=0
target/release/koma train --config "$config" --run "$run" "${args[@]}" || status=$?
echo "train.sh: checkpoints in runs/$run/checkpoints, evaluations in runs/$run/eval.jsonl" >&2
if [[ -f "runs/$run/elo.png" ]]; then
    echo "train.sh: the network's rating on the ladder over the run: runs/$run/elo.png (and .svg)" >&2
    echo "train.sh: rate more of its checkpoints: target/release/koma evaluate --run runs/$run --points 8" >&2
fi
engines_hint
# The latest checkpoint, as state.json names it (absent if the run stopped before its first).
ckpt="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoint"])' "runs/$run/state.json" 2>/dev/null || true)"
if [[ -n "$ckpt" ]]; then
    echo "train.sh: play the network against the random mover (or --opponent greedy):" >&2
    echo "  target/release/koma evaluate --config $config --simulations 16 --opponent random --games 100 --checkpoint runs/$run/$ckpt" >&2
    echo "train.sh: place it on the ladder as the engine plays it (koma-usi at 800 nodes):" >&2
    echo "  scripts/ladder.sh runs/$run/$ckpt" >&2
fi
exit $status
