#!/usr/bin/env python3
"""YaneuraOu's PackedSfenValue (psv) files as cshogi writes and reads them.

  write DIR        writes DIR/cshogi.psv from a few seeded games (even, a
                   handicap, a sparse position with most pieces in the box, both
                   hands full) using cshogi's Board.to_psfen and move16_to_psv,
                   and next to it what it holds as text (cshogi.psv.txt).
  read FILE        reads a psv file (koma's output, say) with cshogi's
                   Board.set_psfen and move16_from_psv and prints it as text.
  encode TXT FILE  writes the positions of a text file (the same text) as a psv
                   file with cshogi, for koma's bytes to be compared with.

The text, one record a line, tab-separated:

  <sfen without its move number> <move, USI> <score> <gamePly> <game_result>

rules/tests/psv.rs reads data/psv/ (made by `write data/psv`) and, when a
Python with cshogi is at hand, runs `encode` and `read` on koma's output.

Usage (repository root): .venv/bin/python scripts/ref/check_psv.py write data/psv
"""
import os
import random
import sys

import cshogi
import numpy as np

from check_hcpe import play_game  # the same seeded games' moves (this folder)

# (start sfen, seed, plies)
GAMES = [
    (cshogi.STARTING_SFEN, 1, 60),
    ("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1", 2, 40),
    ("7nl/6gk1/6pp1/9/9/9/9/9/K8 b RB2G 1", 3, 30),
    ("4k4/9/9/9/9/9/9/9/4K4 b RB2G2S2N2L9Prb2g2s2n2l9p 1", 4, 40),
]


def position_key(board):
    return " ".join(board.sfen().split()[:3])


def record(board, move, score, ply, result):
    psfen = np.zeros(32, np.uint8)
    board.to_psfen(psfen)
    return (psfen, score, cshogi.move16_to_psv(cshogi.move16(move)), ply, result)


def save(path, records):
    psv = np.zeros(len(records), cshogi.PackedSfenValue)
    for i, (psfen, score, move, ply, result) in enumerate(records):
        psv["sfen"][i] = psfen
        psv["score"][i] = score
        psv["move"][i] = move
        psv["gamePly"][i] = ply
        psv["game_result"][i] = result
    psv.tofile(path)


def write(out_dir):
    """Writes the file, then checks that cshogi reads back what was played."""
    os.makedirs(out_dir, exist_ok=True)
    records, truth = [], []
    for sfen, seed, plies in GAMES:
        rng = random.Random(seed * 7919)
        board = cshogi.Board(sfen)
        winner = rng.choice([cshogi.BLACK, cshogi.WHITE, None])
        for i, move in enumerate(play_game(sfen, seed, plies)):
            score = rng.randint(-3000, 3000) if i > 1 else [32767, -32768][i]
            ply = int(sfen.split()[3]) + i
            result = 0 if winner is None else (1 if board.turn == winner else -1)
            records.append(record(board, move, score, ply, result))
            truth.append(f"{position_key(board)}\t{cshogi.move_to_usi(move)}\t{score}\t{ply}\t{result}\n")
            board.push(move)
    path = os.path.join(out_dir, "cshogi.psv")
    save(path, records)
    text = read(path)
    assert text == "".join(truth), f"cshogi does not read back {path} as written"
    with open(path + ".txt", "w") as f:
        f.write(text)
    print(f"{path}: {os.path.getsize(path)} bytes, {len(truth)} records")


def read(path):
    lines = []
    board = cshogi.Board()
    for entry in np.fromfile(path, cshogi.PackedSfenValue):
        board.set_psfen(np.asarray(entry["sfen"]))
        assert board.is_ok(), path
        move = board.move_from_psv(int(entry["move"]))
        assert board.is_legal(move), (board.sfen(), int(entry["move"]))
        usi = cshogi.move_to_usi(move)
        lines.append(f"{position_key(board)}\t{usi}\t{entry['score']}\t{entry['gamePly']}\t{entry['game_result']}\n")
    return "".join(lines)


def encode(text_path, out_path):
    records = []
    board = cshogi.Board()
    with open(text_path) as f:
        for line in f:
            sfen, usi, score, ply, result = line.rstrip("\n").split("\t")
            board.set_sfen(sfen + " 1")
            move = board.move_from_usi(usi)
            assert board.is_legal(move), (sfen, usi)
            records.append(record(board, move, int(score), int(ply), int(result)))
    save(out_path, records)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "read":
        sys.stdout.write(read(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "encode":
        encode(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
