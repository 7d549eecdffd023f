#!/usr/bin/env bash
# Places a network on the ladder of arena/README.md: koma-usi (the engine a GUI user runs)
# with the network at a fixed node budget plays `koma arena` matches against rungs of
# the ladder (arena/ladder.toml, `koma ladder rungs`), and the script prints its Elo on
# the ladder's scale with a 95% interval.
#
#   scripts/ladder.sh NETWORK [--nodes N] [--games G] [--variant V] [--start RUNG]
#                     [--max-rungs K] [--concurrency K] [--usi-options O=V,...]
#                     [--ladder FILE] [--openings FILE] [--out DIR] [--no-build]
#
# NETWORK: a model file (`koma export`, what models/ ships) or a checkpoint (its .json or
# .safetensors).
#
# Defaults: 800 nodes per move (koma-usi `NodesLimit` and `go nodes`), 40 games per rung
# (each opening of data/openings/<variant>.txt twice, colours swapped), start at greedy,
# at most 3 rungs, 1 game at a time, out runs/ladder-<network name>.
#
# Choosing the rungs: start at --start; while the network scores above 0.5 go up one
# rung, while below 0.5 go down one; stop when the scores bracket it (above 0.5 against
# one rung, below against another), at exactly 0.5, at the end of the ladder, or after
# --max-rungs rungs.
#
# Combining them: the Elo printed last is the maximum-likelihood rating against the
# played rungs at their fixed ladder Elo (logistic model, a draw half a win), with the
# 95% interval from its Fisher information; after a sweep of every game it is a one-sided
# exact bound (`koma ladder place`, arena::ladder::place). Each rung's own estimate (the
# rung's Elo plus the Elo difference of the score, with the arena's interval) is printed
# above it.
#
# Needs the engines of the rungs (scripts/install-engines.sh) and a release build of
# koma and koma-usi (built here unless --no-build; the environment variables KOMA and
# KOMA_USI name other binaries).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

network=""
nodes=800
games=40
variant=shogi
start=greedy
max_rungs=3
concurrency=1
usi_options=""
ladder=""
openings=""
out=""
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) nodes="$2"; shift 2 ;;
        --games) games="$2"; shift 2 ;;
        --variant) variant="$2"; shift 2 ;;
        --start) start="$2"; shift 2 ;;
        --max-rungs) max_rungs="$2"; shift 2 ;;
        --concurrency) concurrency="$2"; shift 2 ;;
        --usi-options) usi_options=",$2"; shift 2 ;;
        --ladder) ladder="$2"; shift 2 ;;
        --openings) openings="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "ladder: unknown option $1" >&2; exit 2 ;;
        *) [ -z "$network" ] || { echo "ladder: one network only" >&2; exit 2; }; network="$1"; shift ;;
    esac
done
[ -n "$network" ] || { usage >&2; exit 2; }
stem="${network%.json}"; stem="${stem%.safetensors}"
case "$stem" in /*) ;; *) stem="$PWD/$stem" ;; esac
# koma-usi's ModelFile takes a checkpoint by its stem and a model file by its path.
if [ -f "$stem.json" ]; then
    model="$stem"
elif [ -f "$stem.safetensors" ]; then
    model="$stem.safetensors"
else
    echo "ladder: no network at $network (neither a model file nor a checkpoint's $stem.json)" >&2
    exit 2
fi
[ -n "$openings" ] || openings="data/openings/$variant.txt"
[ -n "$out" ] || out="runs/ladder-$(basename "$stem")"

if [ "$build" = 1 ]; then
    # shellcheck source=/dev/null
    source scripts/env.sh
    cargo build --release -p koma -p koma-net -p koma-usi >&2
fi
KOMA="${KOMA:-$PWD/target/release/koma}"
USI="${KOMA_USI:-$PWD/target/release/koma-usi}"
for b in "$KOMA" "$USI"; do
    [ -x "$b" ] || { echo "ladder: $b missing (cargo build --release -p koma -p koma-net -p koma-usi)" >&2; exit 2; }
done

ladder_args=()
[ -z "$ladder" ] || ladder_args=(--ladder "$ladder")
names=(); elos=(); specs=(); tc=""; ladder_variant=""
while read -r first second rest; do
    if [ "$first" = "#" ]; then
        case "$second" in
            tc) tc="$rest" ;;
            variant) ladder_variant="$rest" ;;
        esac
        continue
    fi
    names+=("$first"); elos+=("$second"); specs+=("$rest")
done < <("$KOMA" ladder rungs "${ladder_args[@]}")
if [ "$ladder_variant" != "$variant" ]; then
    echo "ladder: the ladder's ratings are for $ladder_variant, not $variant (give a --ladder FILE of $variant rungs)" >&2
    exit 2
fi

index=-1
for i in "${!names[@]}"; do [ "${names[$i]}" = "$start" ] && index=$i; done
[ "$index" -ge 0 ] || { echo "ladder: no rung '$start' (rungs: ${names[*]})" >&2; exit 2; }

net="net=usi:$USI,ModelFile=$model,NodesLimit=$nodes,nodes=$nodes$usi_options"
echo "ladder: $(basename "$stem") as koma-usi at $nodes nodes, $games games per rung, openings $openings, out $out" >&2
mkdir -p "$out"
played=()
direction=0
for ((k = 0; k < max_rungs; k++)); do
    name="${names[$index]}"
    dir="$out/vs-$name"
    echo "ladder: vs $name (${elos[$index]}): koma arena --player $net --player $name=${specs[$index]}" >&2
    rm -rf "$dir" # a fresh measurement (the network behind the path may have changed)
    "$KOMA" arena --gauntlet net --games "$games" --tc "$tc" --time-margin-ms 2000 --hang-timeout 600 \
        --variant "$variant" --openings "$openings" --concurrency "$concurrency" --out "$dir" -q \
        --player "$net" --player "$name=${specs[$index]}" >/dev/null
    played+=("$dir/games.jsonl")
    placed="$("$KOMA" ladder place --player net "${ladder_args[@]}" "$dir/games.jsonl")"
    line="${placed%%$'\n'*}"
    echo "$line"
    score="$(sed -n 's/.*score \([0-9.]*\).*/\1/p' <<<"$line")"
    step=0
    if awk -v s="$score" 'BEGIN { exit !(s > 0.5) }'; then step=1; fi
    if awk -v s="$score" 'BEGIN { exit !(s < 0.5) }'; then step=-1; fi
    # Stop when bracketed (the direction turns), at 0.5, or at the end of the ladder.
    if [ "$step" = 0 ] || [ $((direction * step)) -lt 0 ]; then break; fi
    direction=$step
    index=$((index + step))
    if [ "$index" -lt 0 ] || [ "$index" -ge "${#names[@]}" ]; then break; fi
done
placed="$("$KOMA" ladder place --player net "${ladder_args[@]}" "${played[@]}")"
echo "${placed##*$'\n'}"
