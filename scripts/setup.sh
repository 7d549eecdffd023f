#!/usr/bin/env bash
# Idempotent set-up of the Python side of koma:
#   <repo>/.venv with the pinned torch wheel (libtorch for tch, via LIBTORCH_USE_PYTORCH=1)
#   plus the small Python packages the tests use (tensorboard reads our event files,
#   safetensors opens our exported model files, moto_server is the S3 of the run-store tests).
#
# The default Linux torch wheel from PyPI carries the CUDA libraries (~4.7 GB): the same
# build then runs on a GPU when one is present and on the CPU otherwise.
# A second run is a fast no-op (a marker file records what was installed).
#
# Usage: scripts/setup.sh [--force]
set -euo pipefail

# Keep in step with the tch crate version (tch 0.26 expects torch 2.13.0 exactly).
TORCH_VERSION="2.13.0"
# moto[server]: an S3-compatible server on 127.0.0.1 for the run-store tests (moto_server).
PY_EXTRA=(tensorboard safetensors "moto[server]")

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
MARKER="$VENV/.koma-setup-done"
# What the marker must say for the venv to count as complete.
WANT="torch==$TORCH_VERSION ${PY_EXTRA[*]}"

log() { echo "setup: $*" >&2; }

force=0
if [[ "${1:-}" == "--force" ]]; then force=1; fi

if [[ $force -eq 0 && -f "$MARKER" && "$(cat "$MARKER")" == "$WANT" ]]; then
    # Cheap double check that the marker is not lying (a half-deleted venv).
    if [[ -x "$VENV/bin/python" && -e "$VENV/torch-lib/libtorch_cpu.so" ]]; then
        exit 0
    fi
    log "marker present but venv looks broken; reinstalling"
fi

PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null; then
    log "error: $PYTHON not found (need CPython 3.9+ with the venv module)"
    exit 1
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating virtual environment $VENV"
    "$PYTHON" -m venv "$VENV"
fi

rm -f "$MARKER"
# --no-cache-dir: the torch wheels would otherwise be kept a second time in ~/.cache/pip.
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check --no-cache-dir "$@"; }

if "$VENV/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' else 1)" 2>/dev/null; then
    log "torch $TORCH_VERSION already installed"
else
    log "installing torch==$TORCH_VERSION from PyPI (about 4.7 GB with its CUDA libraries; this takes a while)"
    pip install --progress-bar off "torch==$TORCH_VERSION" >&2
fi

log "installing test helpers: ${PY_EXTRA[*]}"
pip install --progress-bar off "${PY_EXTRA[@]}" >&2

"$VENV/bin/python" -c "import torch; assert torch.__version__.startswith('$TORCH_VERSION'), torch.__version__" >&2

# A stable, Python-version-independent name for libtorch's folder. The binaries carry
# $ORIGIN-relative rpaths to it (see .cargo/config.toml) and scripts/env.sh uses it.
TORCH_LIB="$("$VENV/bin/python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
ln -sfn "$(realpath --relative-to="$VENV" "$TORCH_LIB")" "$VENV/torch-lib"
echo "$WANT" > "$MARKER"
log "done: $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__, "cuda build", torch.version.cuda)')"
