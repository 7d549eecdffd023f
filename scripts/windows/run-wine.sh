#!/usr/bin/env bash
# Runs a Windows program under Wine with koma's test environment (scripts/windows/wine-env.sh),
# in the program's own folder: the command line the arena starts a Windows engine with.
set -euo pipefail
# shellcheck source=scripts/windows/wine-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/wine-env.sh"
cd "$(dirname "$1")"
exe="./$(basename "$1")"
shift
exec env -u DISPLAY -u WAYLAND_DISPLAY wine64 "$exe" "$@"
