#!/usr/bin/env bash
# Writes the engine folder that users take to the machine their GUI runs on:
#
#   dist/koma-engine-<version>-linux-x86_64.tar.gz
#   dist/koma-engine-<version>-windows-x86_64.zip
#
# Each holds the portable engine (koma-usi, built without libtorch: the CPU backend only),
# the `koma` rules tool, the three shipped networks beside the binary as
# model-<variant>.safetensors (where `ModelFile=auto` looks first), and a README
# (docs/engine-folder.md). Nothing in it refers to this checkout, its .venv or the network.
#
# Usage: scripts/package-engine.sh [--linux-only | --windows-only] [--out DIR]
# The Windows build needs the x86_64-pc-windows-gnu Rust target and mingw-w64
# (scripts/windows/wine-env.sh's koma_wine_ready says what is missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=dist
targets=(linux windows)
while [[ $# -gt 0 ]]; do
    case "$1" in
        --linux-only) targets=(linux) ;;
        --windows-only) targets=(windows) ;;
        --out) out="$2"; shift ;;
        *) echo "package-engine: unknown argument '$1' (usage: [--linux-only|--windows-only] [--out DIR])" >&2; exit 2 ;;
    esac
    shift
done

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
log() { echo "package-engine: $*" >&2; }

# The engine's own target folder: building koma-usi without libtorch in target/ would
# replace the checkout's libtorch build of it.
export CARGO_TARGET_DIR="$PWD/target/engine"

# Builds koma-usi (no libtorch) and koma for the Rust target triple $1 ("" = this host).
build() {
    local triple="$1" args=(--release -p koma-usi --no-default-features -p koma)
    [[ -n "$triple" ]] && args+=(--target "$triple")
    log "cargo build ${args[*]}"
    cargo build "${args[@]}"
}

# Fills folder $1 from the binaries in $2 (with suffix $3: "" or .exe).
fill() {
    local dir="$1" bin="$2" exe="$3"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$bin/koma-usi$exe" "$bin/koma$exe" "$dir/"
    for variant in shogi sho dai; do
        cp "models/$variant.safetensors" "$dir/model-$variant.safetensors"
    done
    sed "s/@VERSION@/$version/g" docs/engine-folder.md >"$dir/README.md"
}

mkdir -p "$out"
for t in "${targets[@]}"; do
    name="koma-engine-$version-$t-x86_64"
    stage="$out/$name"
    case "$t" in
        linux)
            build ""
            fill "$stage" "$CARGO_TARGET_DIR/release" ""
            strip "$stage/koma-usi" "$stage/koma" 2>/dev/null || true
            if ldd "$stage/koma-usi" | grep -qi torch; then
                log "error: $stage/koma-usi links libtorch"; exit 1
            fi
            tar -C "$out" -czf "$out/$name.tar.gz.tmp" "$name"
            mv -f "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
            log "wrote $out/$name.tar.gz"
            ;;
        windows)
            build x86_64-pc-windows-gnu
            fill "$stage" "$CARGO_TARGET_DIR/x86_64-pc-windows-gnu/release" .exe
            (cd "$out" && rm -f "$name.zip.tmp" && python3 -m zipfile -c "$name.zip.tmp" "$name" && mv -f "$name.zip.tmp" "$name.zip")
            log "wrote $out/$name.zip"
            ;;
    esac
done
