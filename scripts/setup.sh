#!/usr/bin/env bash
# Idempotent set-up of the Python side of koma:
#   <repo>/.venv with the pinned torch wheel (libtorch for tch, via LIBTORCH_USE_PYTORCH=1)
#   plus the small Python packages the tests use (tensorboard reads our event files,
#   safetensors opens our exported model files, onnxruntime runs our ONNX exports, moto_server
#   is the S3 of the run-store tests, cshogi is the USI client and shogi reference).
#
# The default Linux torch wheel from PyPI carries the CUDA libraries (~4.7 GB): the same
# build then runs on a GPU when one is present and on the CPU otherwise. That wheel is
# built for CUDA 13, which needs an NVIDIA driver 580 or newer. For an older driver, pick
# another build of the same torch version from PyTorch's own index:
#
#   KOMA_TORCH_CUDA=cu126   CUDA 12.6 (driver 525 or newer on Linux)
#   KOMA_TORCH_CUDA=cu128   CUDA 12.8 (driver 525 or newer; Blackwell GPUs need 570+)
#   KOMA_TORCH_CUDA=cu130   CUDA 13.0 from PyTorch's index (driver 580 or newer)
#   KOMA_TORCH_CUDA=cpu     no CUDA at all (about 0.2 GB)
#   unset or empty          PyPI's default wheel (CUDA 13 on Linux)
#
# Changing the choice reinstalls torch (then rebuild: cargo links what .venv holds).
# A second run is a fast no-op (a marker file records what was installed).
#
# Usage: [KOMA_TORCH_CUDA=BUILD] scripts/setup.sh [--force] [--dry-run]
#   --dry-run  check the arguments, print what would be installed, install nothing
set -euo pipefail

# Keep in step with the tch crate version (tch 0.26 expects torch 2.13.0 exactly).
TORCH_VERSION="2.13.0"
# moto[server]: an S3-compatible server on 127.0.0.1 for the run-store tests (moto_server).
# onnxruntime: model/tests/onnx_export.rs runs `koma export --format onnx` files in it
# (pinned; 1.32.0 has a manylinux_2_28 wheel for CPython 3.11 on x86_64).
# cshogi: the USI client that usi/tests/usi_client.rs drives koma-usi with
# (scripts/ref/usi_client_check.py), and the reference of the scripts/ref checks (pinned:
# the test reads its parsers' behaviour).
# rsshogi: an independent reader of YaneuraOu's opening books (koma-net/tests/book.rs via
# scripts/ref/check_book.py; pinned: the test reads its API).
PY_EXTRA=(tensorboard safetensors "moto[server]" "onnxruntime==1.32.0" "cshogi==1.1.0" "rsshogi==1.7.0")

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
MARKER="$VENV/.koma-setup-done"
# What the marker must say for the venv to count as complete.
WANT="torch==$TORCH_VERSION ${PY_EXTRA[*]}"

log() { echo "setup: $*" >&2; }

force=0
dry_run=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        --dry-run) dry_run=1 ;;
        *) log "error: unknown argument '$arg' (usage: [KOMA_TORCH_CUDA=cu126|cu128|cu130|cpu] scripts/setup.sh [--force] [--dry-run])"; exit 2 ;;
    esac
done

# Which torch build: PyPI's default, or one of PyTorch's index (checked before anything
# is touched, so a typo changes nothing).
TORCH_BUILD="${KOMA_TORCH_CUDA:-}"
case "$TORCH_BUILD" in
    "")
        TORCH_SPEC="torch==$TORCH_VERSION"
        INDEX_ARGS=()
        # PyPI's wheel calls itself e.g. 2.13.0+cu130: only the version must match.
        VERSION_CHECK="torch.__version__.split('+')[0] == '$TORCH_VERSION'"
        ;;
    cu126 | cu128 | cu130 | cpu)
        TORCH_SPEC="torch==$TORCH_VERSION+$TORCH_BUILD"
        INDEX_ARGS=(--index-url "https://download.pytorch.org/whl/$TORCH_BUILD")
        VERSION_CHECK="torch.__version__ == '$TORCH_VERSION+$TORCH_BUILD'"
        ;;
    *)
        log "error: KOMA_TORCH_CUDA='$TORCH_BUILD' is not a torch build; use cu126, cu128, cu130 or cpu (or leave it unset for PyPI's default, CUDA 13)"
        exit 2
        ;;
esac
# The marker of a default install stays as it was, so existing set-ups are not redone.
if [[ -n "$TORCH_BUILD" ]]; then WANT="$WANT $TORCH_SPEC"; fi

if [[ $dry_run -eq 1 ]]; then
    echo "would install: $TORCH_SPEC${INDEX_ARGS[*]:+ ${INDEX_ARGS[*]}}"
    exit 0
fi

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

if "$VENV/bin/python" -c "import torch, sys; sys.exit(0 if $VERSION_CHECK else 1)" 2>/dev/null; then
    log "$TORCH_SPEC already installed"
else
    if [[ ${#INDEX_ARGS[@]} -eq 0 ]]; then
        log "installing $TORCH_SPEC from PyPI (about 4.7 GB with its CUDA libraries; this takes a while)"
    else
        log "installing $TORCH_SPEC from ${INDEX_ARGS[1]} (this takes a while)"
    fi
    # A different build of the same version: pip keeps an installed one unless asked.
    pip install --progress-bar off --force-reinstall --no-deps "${INDEX_ARGS[@]}" "$TORCH_SPEC" >&2 ||
        { log "error: could not install $TORCH_SPEC"; exit 1; }
    pip install --progress-bar off "${INDEX_ARGS[@]}" "$TORCH_SPEC" >&2
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
