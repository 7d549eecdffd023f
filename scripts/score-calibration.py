#!/usr/bin/env python3
"""Whether a teacher's scores, as koma reads them, predict its games' results.

`koma gen` turns an engine's score into a win probability (its --score-scale, centipawns
per logistic unit) and mixes it into the value target. A teacher whose scores run on
another scale than the one given would teach a value that is too sure or too timid.
This reads `koma convert-samples` output (hcpe3: every move's eval on dlshogi's scale, the
game's result) and prints, per band of the scores' win probability, how often the side
to move went on to win (a draw counts a half):

  koma convert-samples -o runs/x/gps3.hcpe3 runs/x/gps3-games
  scripts/score-calibration.py runs/x/gps3.hcpe3 runs/x/fsf.hcpe3

A calibrated teacher wins about as often as its band says; compare teachers side by side.
Standard library only.
"""
import math
import struct
import sys

# dlshogi's centipawns per logistic unit: the scale of an hcpe3 eval (data/FORMAT.md).
DLSHOGI_EVAL_SCALE = 756.0
BANDS = 5


def moves(path):
    """(eval, outcome for the side to move) for every move record of an hcpe3 file."""
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        if at + 36 > len(data):
            sys.exit(f"{path}: truncated game header at byte {at}")
        count, result, _opponent = struct.unpack_from("<HBB", data, at + 32)
        gote_first = data[at] & 1  # the hcp's first bit: the start's side to move
        winner = result & 3  # 0 draw, 1 sente, 2 gote
        at += 36
        for ply in range(count):
            if at + 6 > len(data):
                sys.exit(f"{path}: truncated move record at byte {at}")
            _move, evaluation, candidates = struct.unpack_from("<HhH", data, at)
            at += 6 + 4 * candidates
            gote_to_move = gote_first ^ (ply & 1)
            if winner == 0:
                outcome = 0.5
            else:
                outcome = 1.0 if (winner == 2) == bool(gote_to_move) else 0.0
            yield evaluation, outcome


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        bands = [[] for _ in range(BANDS)]
        for evaluation, outcome in moves(path):
            p = 1.0 / (1.0 + math.exp(-evaluation / DLSHOGI_EVAL_SCALE))
            bands[min(int(p * BANDS), BANDS - 1)].append((p, outcome))
        print(path)
        print("  band       positions  predicted  won")
        for k, band in enumerate(bands):
            if band:
                predicted = sum(p for p, _ in band) / len(band)
                won = sum(o for _, o in band) / len(band)
                print(f"  {k / BANDS:.1f}-{(k + 1) / BANDS:.1f}  {len(band):>11}  {predicted:>9.2f}  {won:.2f}")


if __name__ == "__main__":
    main()
