# Source this file (do not execute it): `source scripts/env.sh`.
# Makes sure the pinned torch venv exists (scripts/setup.sh, a fast no-op when done) and
# sets up the environment that tch's build script (torch-sys) and the binaries need.
#
#   LIBTORCH_USE_PYTORCH=1  torch-sys asks the venv's python where libtorch is
#   PATH                    .venv/bin first, so that `python` is the venv's python; then
#                           target/release, so that `koma` and `koma-usi` run as the README
#                           writes them (once built: `cargo build --release -p koma -p koma-net -p koma-usi`)
#   LD_LIBRARY_PATH         torch/lib, for binaries built elsewhere or copied away from
#                           target/ (the binaries built here find libtorch by rpath anyway)
#
# LIBTORCH_BYPASS_VERSION_CHECK is deliberately NOT set: tch 0.26 / torch-sys 0.26 expect
# exactly torch 2.13.0 (TORCH_VERSION in torch-sys's build.rs) and that is what setup.sh installs.
# shellcheck shell=bash

_koma_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$_koma_root/scripts/setup.sh" || return 1 2>/dev/null || exit 1

export LIBTORCH_USE_PYTORCH=1
export VIRTUAL_ENV="$_koma_root/.venv"
case ":$PATH:" in
    *":$VIRTUAL_ENV/bin:"*) ;;
    *) export PATH="$VIRTUAL_ENV/bin:$PATH" ;;
esac
case ":$PATH:" in
    *":$_koma_root/target/release:"*) ;;
    *) export PATH="$_koma_root/target/release:$PATH" ;;
esac
_koma_torch_lib="$(readlink -f "$VIRTUAL_ENV/torch-lib")"
case ":${LD_LIBRARY_PATH:-}:" in
    *":$_koma_torch_lib:"*) ;;
    *) export LD_LIBRARY_PATH="$_koma_torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
unset _koma_root _koma_torch_lib
