#!/usr/bin/env python3
"""dlshogi's training data (hcpe, hcpe3) as cshogi writes and reads it.

  write DIR   writes DIR/cshogi.hcpe and DIR/cshogi.hcpe3 from a few seeded
              games (even, two-piece handicap, a sparse position with most
              pieces in the box) using cshogi's Board.to_hcp and move16, and
              next to each file what it holds as text (.txt).
  read FILE   reads an .hcpe or .hcpe3 file (koma's output, say) with
              cshogi's Board.set_hcp and move_from_move16 and prints it as
              the same text.

The text, one record a line, tab-separated:

  hcpe:   <sfen> <best move, USI> <eval> <gameResult>
  hcpe3:  game <start sfen> <moveNum> <result byte> <opponent>
          move <sfen before the move> <move, USI> <eval> <candidates>
          where <candidates> is `usi:visits` joined by `,`, or `-` for none.

SFENs are cshogi's Board.sfen(); positions read from hcp have move number 1.
rules/tests/hcpe.rs reads data/hcpe/ (made by `write data/hcpe`) and runs
`read` on koma's output when a Python with cshogi is at hand.

Usage (repository root): .venv/bin/python scripts/ref/check_hcpe.py write data/hcpe
"""
import os
import random
import sys

import cshogi
import numpy as np

# The hcpe3 layout (DeepLearningShogi, cppshogi.h), little-endian.
HCPE3_HEADER = np.dtype([("hcp", np.uint8, 32), ("moveNum", "<u2"), ("result", "u1"), ("opponent", "u1")])
HCPE3_MOVE = np.dtype([("move16", "<u2"), ("eval", "<i2"), ("candidateNum", "<u2")])
HCPE3_CANDIDATE = np.dtype([("move16", "<u2"), ("visitNum", "<u2")])

# (start sfen, seed, plies, hcpe gameResult, hcpe3 result byte, hcpe3 opponent)
GAMES = [
    (cshogi.STARTING_SFEN, 1, 48, 1, 1, 0),
    ("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1", 2, 40, 2, 2 | 8, 1),
    ("7nl/6gk1/6pp1/9/9/9/9/9/K8 b RB2G 1", 3, 30, 0, 0 | 4, 2),
]


def play_game(sfen, seed, plies):
    """A seeded random game that prefers captures (for hands, promotions and
    drops): the moves as cshogi ints."""
    rng = random.Random(seed)
    board = cshogi.Board(sfen)
    moves = []
    for _ in range(plies):
        legal = sorted(board.legal_moves, key=cshogi.move_to_usi)
        if not legal or board.is_game_over():
            break
        captures = [m for m in legal if not cshogi.move_is_drop(m) and board.piece(cshogi.move_to(m)) != 0]
        move = rng.choice(captures if captures and rng.random() < 0.6 else legal)
        moves.append(move)
        board.push(move)
    return moves


def evals(seed, n):
    rng = random.Random(seed * 7919)
    values = [rng.randint(-3000, 3000) for _ in range(n)]
    if seed == 1:
        values[:2] = [32767, -32768]
    return values


def candidates(rng, board, move):
    """(move16, visits) pairs of the played move and up to three other legal
    moves; none for some moves (no search data, as for an opponent's)."""
    if rng.random() < 0.15:
        return []
    others = [m for m in sorted(board.legal_moves, key=cshogi.move_to_usi) if m != move]
    chosen = [move] + rng.sample(others, min(len(others), rng.randint(0, 3)))
    rng.shuffle(chosen)
    return [(cshogi.move16(m), rng.choice([1, 65535, rng.randint(1, 5000)])) for m in chosen]


def hcp_of(board):
    hcp = np.zeros(32, np.uint8)
    board.to_hcp(hcp)
    return hcp


def write(out_dir):
    """Writes the files, then checks that cshogi reads back what was played."""
    os.makedirs(out_dir, exist_ok=True)
    entries, games, truth, truth3 = [], [], [], []
    for sfen, seed, plies, result, result3, opponent in GAMES:
        moves = play_game(sfen, seed, plies)
        values = evals(seed, len(moves))
        board = cshogi.Board(sfen)
        rng = random.Random(seed * 104729)
        records = []
        truth3.append(f"game\t{board.sfen()}\t{len(moves)}\t{result3}\t{opponent}\n")
        for move, value in zip(moves, values):
            usi = cshogi.move_to_usi(move)
            cands = candidates(rng, board, move)
            entries.append((hcp_of(board), value, cshogi.move16(move), result))
            records.append((cshogi.move16(move), value, cands))
            position = " ".join(board.sfen().split()[:3])
            truth.append(f"{position} 1\t{usi}\t{value}\t{result}\n")
            texts = [f"{cshogi.move_to_usi(board.move_from_move16(m))}:{v}" for m, v in cands]
            truth3.append(f"move\t{board.sfen()}\t{usi}\t{value}\t{','.join(texts) or '-'}\n")
            board.push(move)
        games.append((hcp_of(cshogi.Board(sfen)), result3, opponent, records))
    hcpe = np.zeros(len(entries), cshogi.HuffmanCodedPosAndEval)
    for i, (hcp, value, move16, result) in enumerate(entries):
        hcpe["hcp"][i] = hcp
        hcpe["eval"][i] = value
        hcpe["bestMove16"][i] = move16
        hcpe["gameResult"][i] = result
    path = os.path.join(out_dir, "cshogi.hcpe")
    hcpe.tofile(path)
    save_text(path, read_hcpe(path), truth)
    path = os.path.join(out_dir, "cshogi.hcpe3")
    with open(path, "wb") as f:
        for hcp, result3, opponent, records in games:
            header = np.zeros(1, HCPE3_HEADER)
            header["hcp"][0] = hcp
            header["moveNum"] = len(records)
            header["result"] = result3
            header["opponent"] = opponent
            header.tofile(f)
            for move16, value, cands in records:
                np.array([(move16, value, len(cands))], HCPE3_MOVE).tofile(f)
                np.array(cands, HCPE3_CANDIDATE).tofile(f)
    save_text(path, read_hcpe3(path), truth3)


def save_text(path, text, truth):
    assert text == "".join(truth), f"cshogi does not read back {path} as written"
    with open(path + ".txt", "w") as f:
        f.write(text)
    print(f"{path}: {os.path.getsize(path)} bytes, {len(truth)} lines of text")


def read_hcpe(path):
    lines = []
    board = cshogi.Board()
    for entry in np.fromfile(path, cshogi.HuffmanCodedPosAndEval):
        board.set_hcp(np.asarray(entry["hcp"]))
        assert board.is_ok(), path
        move = board.move_from_move16(int(entry["bestMove16"]) & 0xFFFF)
        assert board.is_legal(move), (board.sfen(), int(entry["bestMove16"]))
        lines.append(f"{board.sfen()}\t{cshogi.move_to_usi(move)}\t{entry['eval']}\t{entry['gameResult']}\n")
    return "".join(lines)


def read_hcpe3(path):
    data = open(path, "rb").read()
    offset, lines = 0, []
    board = cshogi.Board()

    def take(dtype, count=1):
        nonlocal offset
        assert offset + dtype.itemsize * count <= len(data), f"{path}: truncated at byte {offset}"
        items = np.frombuffer(data, dtype, count, offset)
        offset += dtype.itemsize * count
        return items

    while offset < len(data):
        header = take(HCPE3_HEADER)[0]
        board.set_hcp(np.array(header["hcp"]))
        assert board.is_ok(), path
        lines.append(f"game\t{board.sfen()}\t{header['moveNum']}\t{header['result']}\t{header['opponent']}\n")
        for _ in range(header["moveNum"]):
            info = take(HCPE3_MOVE)[0]
            cands = take(HCPE3_CANDIDATE, int(info["candidateNum"]))
            move = board.move_from_move16(int(info["move16"]))
            assert board.is_legal(move), (board.sfen(), int(info["move16"]))
            texts = []
            for move16, visits in zip(cands["move16"], cands["visitNum"]):
                candidate = board.move_from_move16(int(move16))
                assert board.is_legal(candidate), (board.sfen(), int(move16))
                texts.append(f"{cshogi.move_to_usi(candidate)}:{visits}")
            usi = cshogi.move_to_usi(move)
            lines.append(f"move\t{board.sfen()}\t{usi}\t{info['eval']}\t{','.join(texts) or '-'}\n")
            board.push(move)
    return "".join(lines)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "read"):
        sys.exit(__doc__)
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[2].endswith(".hcpe3"):
        sys.stdout.write(read_hcpe3(sys.argv[2]))
    else:
        sys.stdout.write(read_hcpe(sys.argv[2]))


if __name__ == "__main__":
    main()
