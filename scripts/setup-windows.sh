#!/usr/bin/env bash
# Idempotent set-up of what the Windows engine folder needs here: the Rust target
# x86_64-pc-windows-gnu (rustup), Debian's mingw-w64 cross compiler (the linker, and the
# test-only shim of scripts/windows/build-shim.sh) and Debian's wine64, which runs the
# Windows engine in scripts/test-engine-folder.sh. A second run is a fast no-op.
#
# Usage: scripts/setup-windows.sh [--check]
#   --check  install nothing; exit 1 (naming what is missing) unless everything is here
# Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { echo "setup-windows: $*" >&2; }
# shellcheck source=scripts/windows/wine-env.sh
source scripts/windows/wine-env.sh

if koma_wine_ready 2>/dev/null; then
    exit 0
fi
if [[ "${1:-}" == --check ]]; then
    koma_wine_ready
    exit 1
fi

DEB_PKGS=(gcc-mingw-w64-x86-64 wine64)
missing=()
for p in "${DEB_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { log "error: not root and no sudo: cannot apt-get install ${missing[*]}"; exit 1; }
        SUDO=sudo
    fi
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { $SUDO apt-get install -y -qq -o=Dpkg::Use-Pty=0 --no-install-recommends "$@" >/dev/null; }
    apt_install "${missing[@]}" || { $SUDO apt-get update -qq && apt_install "${missing[@]}"; }
    # Again, now that wine64's loader is there: on a new machine /usr/lib/wine did not
    # exist when it was first sourced, so it could not go on PATH.
    # shellcheck source=scripts/windows/wine-env.sh
    source scripts/windows/wine-env.sh
fi
if ! rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu; then
    log "rustup target add x86_64-pc-windows-gnu"
    rustup target add x86_64-pc-windows-gnu
fi
koma_wine_ready
log "ready: $(command -v wine64), $(command -v x86_64-w64-mingw32-gcc), Rust target x86_64-pc-windows-gnu"
