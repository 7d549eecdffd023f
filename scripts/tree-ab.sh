#!/usr/bin/env bash
# Builds against each other on the tree's own cost (`koma bench tree`): each build runs
# each config for a few seconds in turn, several turns, so that the machine's swings fall
# on all of them alike; prints every turn, then each build's mean leaves per CPU second of
# the worker thread and its ratio to the first build. This machine's swing between turns
# is 10 to 15%: only means over turns, and ratios within one run, mean anything.
#
#   scripts/tree-ab.sh [--seconds S] [--turns T] [--no-phases] [--pause PGID]... BUILD_DIR... -- CONFIG...
#
# BUILD_DIR: a folder with a `koma-net` binary (keep one per build: `cp target/release/koma-net
# runs/bin/NAME/`). CONFIG: a koma config file, or NAME for configs/NAME.toml. Defaults:
# 4 s a turn after a 1 s warm-up, 3 turns. `--pause PGID` stops that process group during
# the run and resumes it after (a background match at fixed nodes or a long byoyomi).
# `--no-phases` measures the workers as self-play runs them, without the phases' clock reads
# (every build then needs `bench tree --no-phases`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

usage() { sed -n '2,15p' "$0"; exit 2; }
seconds=4; turns=3; pauses=(); builds=(); configs=(); extra=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --turns) turns="$2"; shift 2 ;;
        --pause) pauses+=("$2"); shift 2 ;;
        --no-phases) extra+=(--no-phases); shift ;;
        -h|--help) usage ;;
        -*) echo "tree-ab: unknown option $1" >&2; usage ;;
        *) builds+=("$1"); shift ;;
    esac
done
[[ $# -gt 0 ]] && shift
configs=("$@")
[[ ${#builds[@]} -ge 1 && ${#configs[@]} -ge 1 ]] || usage
for b in "${builds[@]}"; do
    [[ -x "$b/koma-net" ]] || { echo "tree-ab: no koma-net in $b" >&2; exit 2; }
done
for i in "${!configs[@]}"; do
    c="${configs[$i]}"
    [[ -f "$c" ]] || c="configs/$c.toml"
    [[ -f "$c" ]] || { echo "tree-ab: no config ${configs[$i]}" >&2; exit 2; }
    configs[i]="$c"
done
# shellcheck source=env.sh
source scripts/env.sh

resume() { for p in "${pauses[@]}"; do kill -CONT -- "-$p" 2>/dev/null || true; done; }
trap resume EXIT
for p in "${pauses[@]}"; do kill -STOP -- "-$p" || { echo "tree-ab: no process group $p" >&2; exit 2; }; done

results=$(mktemp)
for turn in $(seq "$turns"); do
    for c in "${configs[@]}"; do
        for b in "${builds[@]}"; do
            out=$("$b/koma-net" bench tree --config "$c" --seconds "$seconds" --rounds 1 --warmup 1 "${extra[@]}" 2>&1) \
                || { echo "tree-ab: $b on $c failed:" >&2; echo "$out" >&2; exit 1; }
            per_cpu=$(awk '/^all:/ {print $6}' <<<"$out")
            phases=$(sed -nE 's/^per leaf: //p' <<<"$out" | sed -E 's/ ns \([0-9.]+%\)//g')
            echo "turn $turn  $(basename "$c" .toml)  $b  $per_cpu leaves/s  ($phases)"
            echo "$(basename "$c" .toml) $b $per_cpu" >>"$results"
        done
    done
done
echo
echo "mean leaves per CPU second of the worker thread over $turns turns, and the ratio to ${builds[0]}:"
awk -v first="${builds[0]}" '
    { key = $1 SUBSEP $2; sum[key] += $3; n[key]++; if (!($1 in seen)) { seen[$1] = 1; order[++nc] = $1 }
      if (!(($1, $2) in bseen)) { bseen[$1, $2] = 1; border[$1, ++nb[$1]] = $2 } }
    END {
        for (i = 1; i <= nc; i++) {
            c = order[i]; base = sum[c, first] / n[c, first]
            for (j = 1; j <= nb[c]; j++) {
                b = border[c, j]; m = sum[c, b] / n[c, b]
                printf "  %-20s %-28s %10.0f  %.2fx\n", c, b, m, m / base
            }
        }
    }' "$results"
rm -f "$results"
