#!/usr/bin/env bash
# The A/B protocol for claims that a change helps learning: two training runs, one per
# config, started together and stopped by the same wall-clock limit, so that both get the
# same machine under the same load (equal wall time), then each run's last network plays
# the same opponent at the same node budget from the same openings. Prints both scores
# with their Elo intervals.
#
#   scripts/ab.sh CONFIG_A CONFIG_B [--minutes M] [--games G] [--nodes N] [--opponent SPEC]
#                 [--name NAME]
#
# Defaults: 25 minutes, 40 games, 800 nodes, the built-in material:2 player (the rung
# above greedy; `--opponent` may be given several times, each a player SPEC of
# arena/README.md). Runs go to runs/NAME-a and runs/NAME-b; each opponent plays both
# arms' last networks in one gauntlet (runs/NAME-vs-<opponent>). At a fixed node budget
# the matches' results do not depend on the machine's load; only the training does.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
source scripts/env.sh
cargo build --release -p koma-front -p koma-cli >&2

[[ $# -ge 2 ]] || { sed -n '2,13p' "$0"; exit 2; }
config_a="$1"; config_b="$2"; shift 2
minutes=25; games=40; nodes=800; opponents=(); name="ab-$(date -u +%Y%m%d-%H%M%S)"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --games) games="$2"; shift 2 ;;
        --nodes) nodes="$2"; shift 2 ;;
        --opponent) opponents+=("$2"); shift 2 ;;
        --name) name="$2"; shift 2 ;;
        *) echo "ab.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ ${#opponents[@]} -gt 0 ]] || opponents=(material:2)
koma=target/release/koma
$koma train --config "$config_a" --run "$name-a" --max-minutes "$minutes" > "runs/$name-a.log" 2>&1 &
pid_a=$!
$koma train --config "$config_b" --run "$name-b" --max-minutes "$minutes" > "runs/$name-b.log" 2>&1 &
pid_b=$!
echo "ab.sh: training $config_a and $config_b for $minutes minutes (logs runs/$name-{a,b}.log)" >&2
wait $pid_a $pid_b
ckpt_a="$(ls "runs/$name-a/checkpoints/"ckpt-*.json | sort | tail -1 | sed 's/\.json$//')"
ckpt_b="$(ls "runs/$name-b/checkpoints/"ckpt-*.json | sort | tail -1 | sed 's/\.json$//')"
for arm in a b; do echo "ab.sh: arm $arm: $(tail -1 "runs/$name-$arm.log")" >&2; done
for opp in "${opponents[@]}"; do
    $koma arena --player "a=koma:$ckpt_a,nodes=$nodes" --player "b=koma:$ckpt_b,nodes=$nodes" --player "opp=$opp" \
        --gauntlet opp --games "$games" --tc "nodes=$nodes" --concurrency 2 --quiet \
        --out "runs/$name-vs-$(echo "$opp" | tr -c 'A-Za-z0-9\n' '-')" | tail -1
done
