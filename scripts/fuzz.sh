#!/usr/bin/env bash
# The fuzz suite's long mode: every `fuzz_*` test of the workspace (game records,
# hcpe/hcpe3/sample chunks, model files, USI and XBoard command streams, configs) with
# many cases, round after round with new seeds, until the time is up. The README's test
# command runs the same tests with a few hundred cases each.
#
# Usage: scripts/fuzz.sh [MINUTES] [CASES] [FIRST_ROUND]
#   (defaults: 60 minutes, 20000 cases a test a round, round 1; round N uses seed N, so a
#   later run that goes on from round 11 tries new inputs)
# A failing case is reported by its test with the seed that reproduces it; the log of every
# round is kept in runs/fuzz/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=env.sh
source scripts/env.sh
minutes="${1:-60}"
cases="${2:-20000}"
first_round="${3:-1}"
out=runs/fuzz
mkdir -p "$out"
cargo test --release --workspace --test 'fuzz_*' --no-run >&2
deadline=$(( $(date +%s) + 60 * minutes ))
round=$((first_round - 1))
total=0
while (( $(date +%s) < deadline )); do
    round=$((round + 1))
    log="$out/round-$round.log"
    echo "fuzz.sh: round $round: $cases cases a test, seed offset $round (log $log)" >&2
    if ! KOMA_FUZZ_CASES="$cases" KOMA_FUZZ_SEED="$round" \
        cargo test --release --workspace --test 'fuzz_*' -- --test-threads 1 >"$log" 2>&1; then
        echo "fuzz.sh: round $round FAILED: see $log" >&2
        grep -E "panicked|FAILED|failed" "$log" | head -20 >&2
        exit 1
    fi
    tests=$(grep -c "^test .* ok$" "$log" || true)
    total=$((total + tests * cases))
    echo "fuzz.sh: round $round passed: $tests tests; $total cases in all so far" >&2
done
echo "fuzz.sh: rounds $first_round to $round, $total cases, no finding" >&2
