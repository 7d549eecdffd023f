#!/usr/bin/env bash
# Remakes the networks in models/ (the ones koma-usi loads without any training) from
# nothing but this repository and the Debian engines (scripts/install-engines.sh), then
# measures each one as a GUI user plays it: koma-usi at 800 nodes through `koma arena`.
#
#   scripts/make-models.sh [--no-measure] [VARIANT ...]     (default: shogi sho dai)
#
#   shogi  the teacher bootstrap in three steps (scripts/bootstrap.sh): Fairy-Stockfish at
#          depth 5 plays 2,000 games, configs/shogi-boot.toml learns them for 3 epochs
#          (about 60 minutes on two quiet cores); then Fairy-Stockfish at 16,000 nodes a
#          move plays 500 games and configs/shogi-boot-finetune.toml learns them for 2
#          epochs on top of the first network (about 70 minutes more); then gpsusi at
#          depth 3 plays 440 games, learnt the same way on top of the second (about 70
#          minutes more); measured against fsf5, 40 games
#   sho    60 minutes of self-play from zero with the rules' material prior
#          (configs/sho-tiny.toml); measured against greedy, 40 games
#   dai    the HaChu bootstrap (scripts/bootstrap.sh --variant dai): HaChu at depth 1
#          plays 600 games, configs/dai-tiny.toml learns them for 2 epochs (about 30
#          minutes); measured against greedy, 40 games
#
# Each network is exported (`koma export`) to models/<variant>.safetensors; its run stays
# in runs/models-<variant> (shogi: runs/models-shogi-gps3, after models-shogi-fsf5 and
# models-shogi-fsfn16k), the matches in runs/models-<variant>-vs-<rung>. Write what the
# matches print into models/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=env.sh
source scripts/env.sh

measure=1
variants=()
for arg in "$@"; do
    case "$arg" in
        --no-measure) measure=0 ;;
        shogi|sho|dai) variants+=("$arg") ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "make-models.sh: unknown argument $arg (variants: shogi sho dai)" >&2; exit 2 ;;
    esac
done
[[ ${#variants[@]} -gt 0 ]] || variants=(shogi sho dai)

cargo build --release -p koma -p koma-usi >&2
koma=target/release/koma
mkdir -p models
# The newest checkpoint of run $1 (without .json), or nothing: no match is not an error.
latest() { local f; f=$(ls "runs/$1/checkpoints/"ckpt-*.json 2>/dev/null | sort | tail -1) || true; echo "${f%.json}"; }

train() {
    case "$1" in
        shogi)
            # The depth-5 games make the start; the stronger teacher's games the shipped network.
            scripts/bootstrap.sh --variant shogi --run models-shogi-fsf5
            local start; start="$(latest models-shogi-fsf5)"
            [[ -n "$start" ]] || { echo "make-models.sh: shogi: no checkpoint in runs/models-shogi-fsf5" >&2; exit 1; }
            scripts/bootstrap.sh --variant shogi --run models-shogi-fsfn16k --init "$start" --games 500 --part-games 500 \
                --epochs 2 --engine "usi:/usr/games/fairy-stockfish,Threads=1,Hash=16,nodes=16000"
            local second; second="$(latest models-shogi-fsfn16k)"
            [[ -n "$second" ]] || { echo "make-models.sh: shogi: no checkpoint in runs/models-shogi-fsfn16k" >&2; exit 1; }
            # gpsusi takes no `go depth`: its LimitDepth under a byoyomi ceiling. (The shipped
            # network learnt data/teacher/gps3/train, these games with seed 201.)
            scripts/bootstrap.sh --variant shogi --run models-shogi-gps3 --init "$second" --games 440 --part-games 440 \
                --epochs 2 --engine "usi:/usr/games/gpsusi,Thread=1,LimitDepth=3,BookDepth=0" --tc byoyomi=60000
            final_run=models-shogi-gps3 ;;
        dai) scripts/bootstrap.sh --variant dai --run models-dai ;;
        sho) $koma train --config configs/sho-tiny.toml --run models-sho --max-minutes 60 ;;
    esac
}

# koma-usi with the exported file, at 800 nodes, against one rung of the variant's ladder.
place() {
    local variant="$1" rung="$2" spec="$3" plies="$4"
    # A new network: the last measurement's games are of the old one.
    rm -rf "runs/models-$variant-vs-$rung"
    $koma arena --variant "$variant" \
        --player "net=usi:$ROOT/target/release/koma-usi,UCI_Variant=$variant,ModelFile=$ROOT/models/$variant.safetensors,Threads=1,TorchThreads=1,nodes=800" \
        --player "$rung=$spec" --gauntlet net --games 40 --tc nodes=800 --max-plies "$plies" \
        --concurrency 2 --quiet --out "runs/models-$variant-vs-$rung"
}

for v in "${variants[@]}"; do
    SECONDS=0
    echo "make-models.sh: $v: training" >&2
    final_run="models-$v"
    train "$v"
    ckpt="$(latest "$final_run")"
    [[ -n "$ckpt" ]] || { echo "make-models.sh: $v: no checkpoint in runs/$final_run" >&2; exit 1; }
    $koma export "$ckpt" --out "models/$v.safetensors"
    echo "make-models.sh: $v: models/$v.safetensors from $ckpt ($((SECONDS / 60)) min)" >&2
    if [[ $measure == 1 ]]; then
        case "$v" in
            shogi) place shogi fsf5 "usi:/usr/games/fairy-stockfish,Threads=1,Hash=16,depth=5" 320 ;;
            sho) place sho greedy greedy 320 ;;
            dai) place dai greedy greedy 500 ;;
        esac
    fi
done
