#!/usr/bin/env bash
# The A/B protocol for claims that a change helps learning: one training run per config,
# all started together and stopped by the same wall-clock limit, so that every arm gets
# the same machine under the same load (equal wall time), then each run's last network
# plays the same opponent at the same node budget from the same openings. Prints every
# arm's score with its Elo interval.
#
#   scripts/ab.sh CONFIG_A CONFIG_B [CONFIG_C ...] [--minutes M] [--games G] [--nodes N]
#                 [--opponent SPEC] [--name NAME]
#
# Defaults: 25 minutes, 40 games, 800 nodes, the built-in material:2 player (the rung
# above greedy; `--opponent` may be given several times, each a player SPEC of
# arena/README.md). Arms are a, b, c, ... in the order given: runs go to runs/NAME-a,
# runs/NAME-b, ...; each opponent plays all arms' last networks in one gauntlet
# (runs/NAME-vs-<opponent>, its report.md has the table). At a fixed node budget the
# matches' results do not depend on the machine's load; only the training does. More
# arms share the cores: each gets less compute in the same minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
source scripts/env.sh

usage() { sed -n '2,17p' "$0"; exit 2; }
configs=(); minutes=25; games=40; nodes=800; opponents=(); name="ab-$(date -u +%Y%m%d-%H%M%S)"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --games) games="$2"; shift 2 ;;
        --nodes) nodes="$2"; shift 2 ;;
        --opponent) opponents+=("$2"); shift 2 ;;
        --name) name="$2"; shift 2 ;;
        -h|--help) usage ;;
        --*) echo "ab.sh: unknown argument $1" >&2; exit 2 ;;
        *) [[ -f "$1" ]] || { echo "ab.sh: no config file $1" >&2; exit 2; }
           configs+=("$1"); shift ;;
    esac
done
[[ ${#configs[@]} -ge 2 ]] || usage
[[ ${#configs[@]} -le 26 ]] || { echo "ab.sh: at most 26 arms" >&2; exit 2; }
[[ ${#opponents[@]} -gt 0 ]] || opponents=(material:2)
cargo build --release -p koma -p koma-net >&2

koma=target/release/koma
arms=(); pids=()
letters=abcdefghijklmnopqrstuvwxyz
for i in "${!configs[@]}"; do
    arm="${letters:$i:1}"; arms+=("$arm")
    $koma train --config "${configs[$i]}" --run "$name-$arm" --max-minutes "$minutes" \
        > "runs/$name-$arm.log" 2>&1 &
    pids+=($!)
    echo "ab.sh: arm $arm: ${configs[$i]} (log runs/$name-$arm.log)" >&2
done
echo "ab.sh: training ${#arms[@]} arms side by side for $minutes minutes" >&2
failed=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "ab.sh: arm ${arms[$i]} failed: see runs/$name-${arms[$i]}.log" >&2; failed=1; }
done
[[ $failed -eq 0 ]] || exit 1

players=()
for arm in "${arms[@]}"; do
    ckpt="$(ls "runs/$name-$arm/checkpoints/"ckpt-*.json | sort | tail -1 | sed 's/\.json$//')"
    echo "ab.sh: arm $arm: $ckpt; $(tail -1 "runs/$name-$arm.log")" >&2
    players+=(--player "$arm=koma:$ckpt,nodes=$nodes")
done
for opp in "${opponents[@]}"; do
    out="runs/$name-vs-$(echo "$opp" | tr -c 'A-Za-z0-9\n' '-')"
    $koma arena "${players[@]}" --player "opp=$opp" --gauntlet opp --games "$games" \
        --tc "nodes=$nodes" --concurrency 2 --quiet --out "$out" | tail -1
    echo "ab.sh: against $opp: $out/report.md" >&2
done
