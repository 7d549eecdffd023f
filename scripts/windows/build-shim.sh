#!/usr/bin/env bash
# Builds the test-only bcryptprimitives.dll shim into OUTDIR (created if missing).
#
#   scripts/windows/build-shim.sh OUTDIR
#
# Wine 8 (Debian bookworm) lacks bcryptprimitives.dll, which Rust's std imports on Windows
# (ProcessPrng), so a Rust .exe does not start there without it. Put the DLL beside the .exe
# in a test folder only: real Windows has the DLL, and the shim never ships.
# Idempotent: the DLL is rebuilt only when it is missing or older than its sources.
# Needs x86_64-w64-mingw32-gcc (Debian: apt-get install gcc-mingw-w64-x86-64).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
src="$here/bcryptprimitives.c"
def="$here/bcryptprimitives.def"
dll="$out/bcryptprimitives.dll"
cc="${MINGW_CC:-x86_64-w64-mingw32-gcc}"

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "error: $cc not found; install it with: apt-get install gcc-mingw-w64-x86-64" >&2
    exit 1
fi

# Say so when this Wine has its own bcryptprimitives.dll (newer Wine does): the shim is
# then not needed, but still harmless.
for d in /usr/lib/x86_64-linux-gnu/wine/x86_64-windows /usr/lib/wine/x86_64-windows \
         /usr/lib64/wine/x86_64-windows /opt/wine-*/lib64/wine/x86_64-windows; do
    if [ -e "$d/bcryptprimitives.dll" ]; then
        echo "note: this Wine already has $d/bcryptprimitives.dll; the shim is not needed (built anyway)" >&2
        break
    fi
done

mkdir -p "$out"
if [ -f "$dll" ] && [ "$dll" -nt "$src" ] && [ "$dll" -nt "$def" ] && [ "$dll" -nt "$0" ]; then
    echo "up to date: $dll"
    exit 0
fi
tmp="$dll.tmp.$$"
trap 'rm -f "$tmp"' EXIT
"$cc" -shared -O2 -s -Wall -Wextra -static-libgcc -o "$tmp" "$src" "$def" -ladvapi32
mv -f "$tmp" "$dll"
echo "built: $dll"
