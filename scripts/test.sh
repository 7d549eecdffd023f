#!/usr/bin/env bash
# Runs all of koma's tests (and the module-cycle, drift and gpu-run checks). On first use it
# sets up what is missing: the .venv with the pinned torch wheel (scripts/setup.sh), then builds.
#
# Usage: scripts/test.sh [extra cargo test arguments]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

echo "== cargo test (workspace, optimised: the rules tests run real perft depths)" >&2
cargo test --release --workspace "$@"

echo "== perft: the large reference counts (start position to depth 6, matsuri depth 4, ...)" >&2
cargo test --release -p koma-rules --test reference_data -- --ignored

echo "== without libtorch: the search, the arena and the engine (the portable CPU backend only)" >&2
# Their own target folder (the engine folder's, scripts/package-engine.sh): features
# without libtorch would otherwise rebuild target/'s libtorch builds of these crates.
CARGO_TARGET_DIR="$PWD/target/engine" cargo test --release -p koma-search -p koma-arena -p koma-usi --no-default-features "$@"

echo "== the engine folders (Linux, and Windows under Wine), unpacked away from this checkout" >&2
# Sets up the Windows cross compiler and Wine when missing (root or sudo); without them
# the Linux folder alone is tested, and the run says so.
if bash scripts/setup-windows.sh; then
    scripts/test-engine-folder.sh
else
    echo "test.sh: WARNING: no Windows toolchain or Wine here (scripts/setup-windows.sh failed): testing the Linux engine folder only" >&2
    scripts/test-engine-folder.sh --linux-only
fi

echo "== module cycles: no two modules of a crate import each other" >&2
python3 scripts/module-cycles.py --self-test
python3 scripts/module-cycles.py

echo "== drift: the Rust paths the docs and configs name exist; the README's crate table is in dependency order" >&2
python3 scripts/check-drift.py --self-test
python3 scripts/check-drift.py

echo "== scripts/gpu-run.sh on the CPU: a one-minute run of its preset (--smoke) ends with checkpoints and logs" >&2
gpu_run_out="$(mktemp -d)"
scripts/gpu-run.sh --device cpu --smoke --minutes 1 --out "$gpu_run_out/out" >/dev/null
rm -rf "$gpu_run_out"
