#!/usr/bin/env bash
# Builds the tree benchmark's baseline: commit 88a9667 (the code before the tree's speed work)
# with `koma bench tree --no-phases` ported to it (scripts/tree-baseline.patch: the same
# measurement on that build's worker loop, nothing else changed), into runs/bin/before88/, so
# that scripts/tree-ab.sh --no-phases compares today's build with it in one run:
#
#   scripts/tree-baseline.sh
#   cp target/release/koma-net runs/bin/now/
#   scripts/tree-ab.sh --no-phases runs/bin/before88 runs/bin/now -- runs/cfg-88a9667/shogi-b10c128.toml ...
#
# The configs of 88a9667 are written to runs/cfg-88a9667/ (the old build refuses newer keys).
# About 9 minutes on two cores (a separate target folder, runs/target-before88).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
base=88a9667
tree=runs/wt-before88
if [[ ! -d "$tree" ]]; then
    git worktree add --detach "$tree" "$base" >/dev/null
    git -C "$tree" apply "$ROOT/scripts/tree-baseline.patch"
fi
mkdir -p runs/cfg-88a9667 runs/bin/before88
for c in $(git ls-tree --name-only "$base" configs/ | grep '\.toml$'); do
    git show "$base:$c" > "runs/cfg-88a9667/$(basename "$c")"
done
# shellcheck source=env.sh
source scripts/env.sh
(cd "$tree" && CARGO_TARGET_DIR="$ROOT/runs/target-before88" cargo build --release -p koma-cli --bin koma-net)
cp runs/target-before88/release/koma-net runs/bin/before88/
echo "tree-baseline: runs/bin/before88/koma-net (commit $base with the ported benchmark); configs in runs/cfg-88a9667/"
