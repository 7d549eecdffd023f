# Environment for running Windows builds of koma under Wine (tests only). Source it (bash):
#
#   source scripts/windows/wine-env.sh
#   koma_wine_ready || exit 1
#   scripts/windows/build-shim.sh "$dir"         # bcryptprimitives.dll beside the .exe
#   koma_wine "$dir/koma.exe" perft --depth 4 </dev/null
#
# Debian bookworm: apt-get install -y --no-install-recommends gcc-mingw-w64-x86-64 wine64
#                  rustup target add x86_64-pc-windows-gnu
# The wine64 package puts its loader in /usr/lib/wine (only the `wine` package adds
# /usr/bin/wine*), so that folder goes on PATH here when wine64 is not found otherwise.
#
# The prefix is created on the first run (~4 s, ~700 MB); a throwaway one by default.
# KOMA_WINEPREFIX overrides it; a WINEPREFIX already set is not used, so a personal
# ~/.wine is never touched. Give wine a stdin (</dev/null at least): with stdin closed,
# Rust's stdin reads fail under Wine rather than reading as end of input.

if ! command -v wine64 >/dev/null 2>&1 && [ -x /usr/lib/wine/wine64 ]; then
    PATH="/usr/lib/wine:$PATH"
fi
export PATH
export WINEPREFIX="${KOMA_WINEPREFIX:-${TMPDIR:-/tmp}/koma-wine-prefix}"
export WINEDEBUG=-all
# No Mono/Gecko install prompts, no desktop menu entries written under ~/.local.
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
# Same for 64-bit only: the Windows target of the workspace.
export WINEARCH=win64

# Runs a Windows program under Wine without a display (no window, no dialog).
# The exit status is the program's (0..255 exactly; Windows codes above 255 do not survive).
koma_wine() {
    env -u DISPLAY -u WAYLAND_DISPLAY wine64 "$@"
}

# Checks that the cross toolchain and Wine are there; names what to install otherwise.
koma_wine_ready() {
    local missing=0
    if ! command -v wine64 >/dev/null 2>&1; then
        echo "koma_wine_ready: wine64 not found: apt-get install -y --no-install-recommends wine64" >&2
        missing=1
    fi
    if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
        echo "koma_wine_ready: x86_64-w64-mingw32-gcc not found: apt-get install -y --no-install-recommends gcc-mingw-w64-x86-64" >&2
        missing=1
    fi
    if ! command -v rustup >/dev/null 2>&1; then
        echo "koma_wine_ready: rustup not found (needed for the x86_64-pc-windows-gnu target)" >&2
        missing=1
    elif ! rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu; then
        echo "koma_wine_ready: Rust target x86_64-pc-windows-gnu not installed: rustup target add x86_64-pc-windows-gnu" >&2
        missing=1
    fi
    return "$missing"
}
