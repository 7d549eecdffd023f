#!/usr/bin/env bash
# Runs all of koma's tests (and the module-cycle check). On first use it sets up what is missing:
# the .venv with the pinned torch wheel (scripts/setup.sh), then builds.
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

echo "== module cycles: no two modules of a crate import each other" >&2
python3 scripts/module-cycles.py --self-test
python3 scripts/module-cycles.py
