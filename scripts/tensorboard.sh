#!/usr/bin/env bash
# Shows koma's TensorBoard scalars (losses, accuracy, learning rate, self-play speed,
# evaluation scores and Elo) in a browser: http://localhost:6006
#
#   scripts/tensorboard.sh                 # every run under runs/
#   scripts/tensorboard.sh runs/NAME/tb    # one run
#   scripts/tensorboard.sh runs --port 6007 --bind_all
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logdir="${1:-$ROOT/runs}"
shift || true
if [[ ! -x "$ROOT/.venv/bin/tensorboard" ]]; then
    bash "$ROOT/scripts/setup.sh"
fi
exec "$ROOT/.venv/bin/tensorboard" --logdir "$logdir" "$@"
