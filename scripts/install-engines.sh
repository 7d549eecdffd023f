#!/usr/bin/env bash
# Install the independent reference programs koma's tests and tools compare against.
#
#   Debian packages: fairy-stockfish gpsshogi gnushogi sjaakii hachu
#   Python packages: cshogi pyffish python-shogi
#
# Idempotent: installs only what is missing. Python packages go into the
# project's .venv when .venv/bin/python exists, else into $PYTHON (default:
# python3 on PATH). Needs root (or sudo) for apt-get. Prints where each
# engine binary lives at the end.
set -euo pipefail

cd "$(dirname "$0")/.."

DEB_PKGS=(fairy-stockfish gpsshogi gnushogi sjaakii hachu)
PY_PKGS=(cshogi pyffish python-shogi)

SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-engines: not root and no sudo; cannot apt-get install" >&2
    fi
fi

missing=()
for p in "${DEB_PKGS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-engines: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { $SUDO apt-get install -y -qq -o=Dpkg::Use-Pty=0 --no-install-recommends "$@" >/dev/null; }
    if ! apt_install "${missing[@]}"; then
        $SUDO apt-get update -qq
        apt_install "${missing[@]}"
    fi
else
    echo "install-engines: Debian packages already installed: ${DEB_PKGS[*]}"
fi

if [ -x .venv/bin/python ]; then
    PY=.venv/bin/python
else
    PY="${PYTHON:-python3}"
fi
need_py=()
for p in "${PY_PKGS[@]}"; do
    mod="$p"
    [ "$p" = python-shogi ] && mod=shogi
    if ! "$PY" -c "import $mod" >/dev/null 2>&1; then need_py+=("$p"); fi
done
if [ "${#need_py[@]}" -gt 0 ]; then
    echo "install-engines: $PY -m pip install ${need_py[*]}"
    # Not fatal: the engines above are what CI's arena smoke test needs; the Python
    # packages serve the reference scripts (a system python may refuse pip installs).
    { "$PY" -m pip --version >/dev/null 2>&1 || "$PY" -m ensurepip --upgrade >/dev/null 2>&1; } &&
        "$PY" -m pip install --quiet "${need_py[@]}" ||
        echo "install-engines: warning: could not pip install ${need_py[*]} into $PY" >&2
else
    echo "install-engines: Python packages already importable by $PY: ${PY_PKGS[*]}"
fi

echo "install-engines: engine binaries:"
for b in fairy-stockfish gpsusi gnushogi sjaakii hachu; do
    path="$(command -v "$b" 2>/dev/null || true)"
    [ -z "$path" ] && [ -x "/usr/games/$b" ] && path="/usr/games/$b"
    printf '  %-16s %s\n' "$b" "${path:-NOT FOUND}"
done
"$PY" - <<'PYEOF' || true
import importlib, importlib.metadata as md
for mod, dist in (("cshogi", "cshogi"), ("pyffish", "pyffish"), ("shogi", "python-shogi")):
    try:
        m = importlib.import_module(mod)
        print(f"  python {mod:<10} {md.version(dist):<8} {m.__file__}")
    except Exception as e:
        print(f"  python {mod:<10} NOT IMPORTABLE: {e}")
PYEOF
