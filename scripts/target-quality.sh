#!/usr/bin/env bash
# How good a self-play config's policy targets are for a network (standard shogi): a few
# self-play games with every move a full search, then how often each target's most visited
# move is Fairy-Stockfish's at 128,000 nodes, against the network's prior on the same positions
# (scripts/move-agreement.py --samples). Self-play improves the policy only where its targets
# beat the prior; docs/strength.md, "Why self-play loses".
#
#   scripts/target-quality.sh CONFIG NETWORK [--games 8] [--positions 300] [--out DIR]
#
# e.g. scripts/target-quality.sh configs/shogi-boot-selfplay.toml models/shogi.safetensors
# Needs Fairy-Stockfish (scripts/install-engines.sh) and cshogi in .venv (scripts/env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,11p' "$0"; exit 2; }
[[ $# -ge 2 ]] || usage
config="$1" network="$2"; shift 2
games=8 positions=300 out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --games) games="$2"; shift 2 ;;
        --positions) positions="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "target-quality.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -f "$config" ]] || { echo "target-quality.sh: no config $config" >&2; exit 2; }
out="${out:-runs/target-quality-$(basename "$config" .toml)}"
source scripts/env.sh >/dev/null
koma=target/release/koma
[[ -x "$koma" ]] || cargo build --release -p koma -p koma-net -p koma-usi
mkdir -p "$out"
# Every move a full search, small chunks: the targets the config would train on.
sed -e 's/^full_search_fraction = .*/full_search_fraction = 1.0/' -e 's/^samples_per_chunk = .*/samples_per_chunk = 512/' \
    "$config" > "$out/config.toml"
grep -q '^full_search_fraction' "$out/config.toml" || sed -i 's/^\[selfplay\]/[selfplay]\nfull_search_fraction = 1.0/' "$out/config.toml"
rm -rf "$out/chunks"
"$koma" selfplay --config "$out/config.toml" --checkpoint "$network" --games "$games" --seed 7 --out "$out/chunks" --quiet
rm -f "$out/targets.hcpe3"
# A sample it cannot convert (a position with one legal move has no target) is named and skipped.
"$koma" convert-samples "$out/chunks" -o "$out/targets.hcpe3" || [[ -s "$out/targets.hcpe3" ]]
.venv/bin/python scripts/move-agreement.py --samples "$out/targets.hcpe3" --positions "$positions" --nodes 1 \
    --net "prior=$network" --out "$out/agreement.json"
