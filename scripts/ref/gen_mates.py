#!/usr/bin/env python3
"""Make data/fixtures/mates-shogi.tsv: standard shogi positions with a forced mate.

Each line is

    <sfen>\t<plies: 1 or 3>\t<one mating first move (USI)>\t<all mating first moves, sorted, space separated>

Positions come from random playouts (cshogi legal moves, captures and checks
slightly preferred so hands fill up). A position is kept when

* the side to move is not in check (cshogi's mate_move_in_1ply assumes that),
* cshogi finds a mate: ``mate_move_in_1ply()`` for length 1, ``mate_move(3)``
  for length 3 and no mate in 1 exists,
* a brute-force search over cshogi's legal moves agrees: for length 1 the move
  gives check and leaves no legal reply; for length 3 the first move leaves
  the defender with legal replies only, and after every one of them the
  attacker has a mate in 1. The brute force lists ALL first moves that mate in
  that length; cshogi's move must be among them.
* pyffish agrees that each listed mate-in-1 move mates, and that each listed
  mate-in-3 first move gives check without mating.
* For length 3, no non-checking first move mates in 3 either (checked by brute
  force too), so the list of first moves is the same whether a solver searches
  checks only (tsume style, like cshogi's mate_move) or all moves.

Pawn-drop mate (uchifuzume) is illegal and never in cshogi's legal moves, so
it is neither a mate nor a defence here.

Usage: scripts/ref/gen_mates.py [--seed 1] [--n1 60] [--n3 60] [--out data/fixtures/mates-shogi.tsv]
"""
import argparse
import os
import random
import sys

import cshogi


def legal(board):
    return list(board.legal_moves)


def is_mated(board):
    """Side to move is checkmated (in check, no legal move)."""
    return board.is_check() and not any(True for _ in board.legal_moves)


def mates_in_1(board):
    """All legal moves that checkmate at once (USI strings)."""
    out = []
    for m in legal(board):
        board.push(m)
        if is_mated(board):
            out.append(cshogi.move_to_usi(m))
        board.pop()
    return out


def has_mate_in_1(board):
    for m in legal(board):
        board.push(m)
        mated = is_mated(board)
        board.pop()
        if mated:
            return True
    return False


def forces_mate_in_3(board, m):
    """After first move m, does every defender reply allow a mate in 1?

    Returns True/False, or None when the defender has no legal move after m
    (which would be a mate in 1 or a no-move loss: not a 3-ply mate)."""
    board.push(m)
    try:
        replies = legal(board)
        if not replies:
            return None
        for r in replies:
            board.push(r)
            ok = has_mate_in_1(board)
            board.pop()
            if not ok:
                return False
        return True
    finally:
        board.pop()


def classify(board):
    """Return (length, cshogi move, all first moves) or None."""
    if board.is_check():
        return None
    m1 = board.mate_move_in_1ply()
    all1 = mates_in_1(board)
    if m1:
        u = cshogi.move_to_usi(m1)
        if u not in all1:
            raise AssertionError(f"cshogi mate_move_in_1ply {u} not a mate by brute force: {board.sfen()}")
        return 1, u, sorted(all1)
    if all1:
        # brute force found a mate in 1 that cshogi missed: report, skip
        print(f"# disagreement: brute force mate in 1 {all1}, cshogi none: {board.sfen()}", file=sys.stderr)
        return None
    m3 = board.mate_move(3)
    if not m3:
        return None
    u3 = cshogi.move_to_usi(m3)
    firsts = []
    quiet_mate = False
    for m in legal(board):
        board.push(m)
        gives_check = board.is_check()
        board.pop()
        r = forces_mate_in_3(board, m)
        if r is None:
            return None  # odd case (stalemate-like), leave it out
        if r:
            if gives_check:
                firsts.append(cshogi.move_to_usi(m))
            else:
                quiet_mate = True
    if u3 not in firsts:
        raise AssertionError(f"cshogi mate_move(3) {u3} not a forced mate by brute force: {board.sfen()}")
    if quiet_mate:
        return None
    return 3, u3, sorted(firsts)


def pyffish_confirms(sfen, n, firsts):
    """Second opinion from pyffish (Fairy-Stockfish rules): every listed mate-in-1
    move leaves the defender in check with no legal move; every listed mate-in-3
    first move gives check and leaves the defender a legal reply."""
    import pyffish
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gen_endings import to_fsf, usi_to_fsf
    fen = to_fsf(sfen)
    for u in firsts:
        mv = [usi_to_fsf(u)]
        if not pyffish.gives_check("shogi", fen, mv):
            return False
        has_reply = bool(pyffish.legal_moves("shogi", fen, mv))
        if has_reply != (n == 3):
            return False
    return True


def pick(board, rng):
    moves = legal(board)
    # light bias: captures and checks a bit more likely, so hands fill and kings get exposed
    weights = []
    for m in moves:
        w = 1.0
        if cshogi.move_cap(m):
            w += 3.0
        weights.append(w)
    return rng.choices(moves, weights)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n1", type=int, default=60, help="mate-in-1 positions wanted")
    ap.add_argument("--n3", type=int, default=60, help="mate-in-3 positions wanted")
    ap.add_argument("--out", default="data/fixtures/mates-shogi.tsv")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    found = {1: [], 3: []}
    want = {1: a.n1, 3: a.n3}
    seen = set()
    games = 0
    while len(found[1]) < want[1] or len(found[3]) < want[3]:
        games += 1
        board = cshogi.Board()
        per_game = {1: 0, 3: 0}
        for ply in range(200):
            if board.is_game_over():
                break
            if ply >= 20 and not board.is_check():
                key = board.sfen().rsplit(" ", 1)[0]
                if key not in seen:
                    seen.add(key)
                    res = classify(board)
                    if res:
                        n, u, firsts = res
                        # at most one of each length per game, for variety
                        if per_game[n] == 0 and len(found[n]) < want[n]:
                            per_game[n] += 1
                            found[n].append((board.sfen(), n, u, firsts))
            board.push(pick(board, rng))
        if games % 20 == 0:
            print(f"games {games}: mate1 {len(found[1])} mate3 {len(found[3])}", file=sys.stderr)
    with open(a.out, "w") as f:
        for n in (1, 3):
            for sfen, n_, u, firsts in found[n]:
                if not pyffish_confirms(sfen, n_, firsts):
                    raise AssertionError(f"pyffish disagrees: {sfen} {n_} {firsts}")
                f.write(f"{sfen}\t{n_}\t{u}\t{' '.join(firsts)}\n")
    print(f"wrote {a.out}: {len(found[1])} mate-in-1, {len(found[3])} mate-in-3 from {games} games", file=sys.stderr)


if __name__ == "__main__":
    main()
