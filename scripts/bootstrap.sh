#!/usr/bin/env bash
# The teacher-bootstrap recipe: an engine plays itself (`koma gen`), a network learns its
# moves and scores (`koma learn`), then, optionally, self-play continues from it
# (`koma train --init`).
#
#   scripts/bootstrap.sh [--variant shogi|dai] [--run NAME] [--games N] [--engine SPEC]
#                        [--part-games P] [--tc TC] [--epochs E] [--config FILE] [--init NETWORK]
#                        [--selfplay-minutes M] [--selfplay-config FILE] [--from NETWORK]
#
# --init NETWORK learns the teacher's games from that network's weights instead of from zero
# (shogi: configs/shogi-boot-finetune.toml unless --config says otherwise), e.g. the shipped
# one from a stronger teacher:
#   scripts/bootstrap.sh --variant shogi --init models/shogi.safetensors --run teacher16k --games 2000 \
#     --part-games 500 --engine "usi:/usr/games/fairy-stockfish,Threads=1,Hash=16,nodes=16000"
# --tc TC bounds the teacher's moves where its spec does not (koma gen's --tc; default depth=5):
# gpsusi takes no `go depth` or `go nodes`, so its depth is its LimitDepth option under a
# byoyomi ceiling, e.g. --engine "usi:/usr/games/gpsusi,Thread=1,LimitDepth=3,BookDepth=0"
# --tc byoyomi=60000.
# --from NETWORK skips the teacher and the learning: self-play continues that network
# (a checkpoint or model file; shogi: configs/shogi-boot-selfplay.toml), e.g. the shipped one:
#   scripts/bootstrap.sh --variant shogi --from models/shogi.safetensors --run past-teacher --selfplay-minutes 120
# Run again with the same --run after any stop: each phase done is skipped, and self-play
# resumes from its last checkpoint until it has had M minutes in all. The teacher's games
# are played in parts of P games (default 250; part K in runs/NAME/teacher/part-K, seed K,
# marked DONE when whole), so a stop loses at most the part under way, which is played
# again from its start.
#
# Defaults (scripts/install-engines.sh installs the engines), no self-play:
#   shogi: Fairy-Stockfish at depth 5, 2,000 games (about 230,000 positions), 3 epochs,
#          configs/shogi-boot.toml, games cut at 320 plies; self-play with
#          configs/shogi-boot-selfplay.toml;
#   dai:   HaChu at depth 1, 600 games (about 260,000 positions), 2 epochs,
#          configs/dai-tiny.toml, games cut at 500 plies; self-play with
#          configs/dai-tiny-after-teacher.toml. The dai demo (about an hour on two cores):
#          scripts/bootstrap.sh --variant dai --selfplay-minutes 30
# Output: runs/NAME/teacher/ (sample chunks), runs/NAME/ (checkpoints, TensorBoard).
# Measure the result with scripts/ladder.sh runs/NAME/checkpoints/ckpt-XXXXXXXX.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
source scripts/env.sh
cargo build --release -p koma -p koma-net >&2

run="boot-$(date -u +%Y%m%d-%H%M%S)"
variant=shogi
games=""
part_games=250
engine=""
tc=depth=5
epochs=""
config=""
selfplay_minutes=0
selfplay_config=""
from=""
init=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --variant) variant="$2"; shift 2 ;;
        --run) run="$2"; shift 2 ;;
        --games) games="$2"; shift 2 ;;
        --part-games) part_games="$2"; shift 2 ;;
        --engine) engine="$2"; shift 2 ;;
        --tc) tc="$2"; shift 2 ;;
        --epochs) epochs="$2"; shift 2 ;;
        --config) config="$2"; shift 2 ;;
        --selfplay-minutes) selfplay_minutes="$2"; shift 2 ;;
        --selfplay-config) selfplay_config="$2"; shift 2 ;;
        --from) from="$2"; shift 2 ;;
        --init) init="$2"; shift 2 ;;
        -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
        *) echo "bootstrap.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$variant" in
    shogi) defaults=(2000 "usi:/usr/games/fairy-stockfish,Threads=1,Hash=16,depth=5" 3 configs/shogi-boot.toml 320 configs/shogi-boot-selfplay.toml) ;;
    dai) defaults=(600 "xboard:/usr/games/hachu,depth=1" 2 configs/dai-tiny.toml 500 configs/dai-tiny-after-teacher.toml) ;;
    *) echo "bootstrap.sh: --variant is shogi or dai (sho: pass --engine and --config)" >&2; exit 2 ;;
esac
games="${games:-${defaults[0]}}"
[[ "$games" =~ ^[1-9][0-9]*$ && "$part_games" =~ ^[1-9][0-9]*$ ]] ||
    { echo "bootstrap.sh: --games and --part-games take a positive number of games" >&2; exit 2; }
engine="${engine:-${defaults[1]}}"
epochs="${epochs:-${defaults[2]}}"
if [[ -n "$init" && -z "$config" && "$variant" == shogi ]]; then
    config=configs/shogi-boot-finetune.toml
fi
config="${config:-${defaults[3]}}"
max_plies="${defaults[4]}"
selfplay_config="${selfplay_config:-${defaults[5]:-$config}}"
koma=target/release/koma
teacher="runs/$run/teacher"
# The newest checkpoint of run $1 (without .json), or nothing: no match is not an error.
latest() { local f; f=$(ls "runs/$1/checkpoints/"ckpt-*.json 2>/dev/null | sort | tail -1) || true; echo "${f%.json}"; }

SECONDS=0
if [[ -n "$init" ]]; then
    [[ -z "$from" ]] || { echo "bootstrap.sh: --init learns the teacher's games, --from skips them: give one" >&2; exit 2; }
    [[ -f "$init" || -f "$init.safetensors" || -f "$init.json" ]] || { echo "bootstrap.sh: --init $init: no such network" >&2; exit 2; }
fi
if [[ -n "$from" ]]; then
    [[ -f "$from" || -f "$from.safetensors" || -f "$from.json" ]] || { echo "bootstrap.sh: --from $from: no such network" >&2; exit 2; }
    [[ "$selfplay_minutes" != 0 ]] || { echo "bootstrap.sh: --from needs --selfplay-minutes" >&2; exit 2; }
    ckpt="$from"
    echo "bootstrap.sh: [1-2/3] skipped: self-play continues $from" >&2
else
    # Teacher data of an earlier layout (one folder, no parts) counts as all of it.
    records=("$teacher")
    if [[ -z "$(ls "$teacher"/*.chunk 2>/dev/null)" ]]; then
        parts=$(( (games + part_games - 1) / part_games ))
        records=()
        for ((k = 1; k <= parts; k++)); do
            dir="$teacher/part-$k"
            records+=("$dir")
            [[ -f "$dir/DONE" ]] && continue
            n=$(( k < parts ? part_games : games - (parts - 1) * part_games ))
            echo "bootstrap.sh: [1/3] teacher games, part $k of $parts: $n games by $engine -> $dir ($((SECONDS / 60)) min so far)" >&2
            rm -rf "$dir"
            $koma gen --variant "$variant" --engine "$engine" --tc "$tc" --games "$n" --max-plies "$max_plies" \
                --seed "$k" --out "$dir" --quiet
            touch "$dir/DONE"
        done
    else
        echo "bootstrap.sh: [1/3] teacher data already in $teacher" >&2
    fi
    ckpt="$(latest "$run")"
    if [[ -z "$ckpt" ]]; then
        echo "bootstrap.sh: [2/3] learning $epochs epochs with $config${init:+ from $init} -> runs/$run ($((SECONDS / 60)) min so far)" >&2
        start=()
        [[ -z "$init" ]] || start=(--init "$init")
        $koma learn --config "$config" --records "${records[@]}" --epochs "$epochs" --run "$run" "${start[@]}"
        ckpt="$(latest "$run")"
    else
        echo "bootstrap.sh: [2/3] learnt already: $ckpt" >&2
    fi
fi
if [[ "$selfplay_minutes" != 0 ]]; then
    selfplay_run="$run-selfplay"
    if [[ -f "runs/$selfplay_run/state.json" ]]; then
        echo "bootstrap.sh: [3/3] resuming runs/$selfplay_run until $selfplay_minutes minutes of self-play in all" >&2
        start=(--resume)
    else
        echo "bootstrap.sh: [3/3] $selfplay_minutes minutes of self-play from $ckpt -> runs/$selfplay_run ($((SECONDS / 60)) min so far)" >&2
        start=(--init "$ckpt")
    fi
    $koma train --config "$selfplay_config" --run "$selfplay_run" "${start[@]}" --max-minutes "$selfplay_minutes"
    ckpt="$(latest "$selfplay_run")"
fi
echo "bootstrap.sh: done in $((SECONDS / 60)) min; network $ckpt" >&2
echo "bootstrap.sh: place it on the ladder with: scripts/ladder.sh $ckpt" >&2
