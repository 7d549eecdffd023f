#!/usr/bin/env python3
"""Make data/tsume/reference.tsv: tsume positions labelled by cshogi's df-pn.

Each position is standard shogi with the attacker (the side to move, not in check) to
move. The label is cshogi's ``DfPn`` verdict (the attacker checks with every move; a
pawn-drop mate is illegal; repetition fails for the attacker):

* ``mate``: ``DfPn.search`` proved a mate; its principal variation is replayed with
  cshogi and kept only if it is legal, every attacker's move gives check and it ends in
  checkmate. Its length is cshogi's mate length (not necessarily the shortest).
* ``nomate``: ``DfPn.search`` disproved it with fewer nodes than the limit (a definite
  verdict, not a node limit), and cshogi's fixed-depth search agrees
  (``mate_move_in_1ply()`` and ``mate_move(13)`` find no mate of 13 plies or fewer: on
  the first trial set DfPn once answered "no mate" in 16 nodes where a mate in 7
  exists). Positions that reach the limit, or where the two disagree, are left out.

Positions come from two sources:

* games: the arena games under ``--runs`` (``runs/*/games.jsonl``, standard shogi games
  ending in checkmate), a few plies before the end: the winner to move often has a mate,
  the loser to move rarely; further back the mates get longer;
* built: random tsume-like positions (a gote king on ranks a-c, a few defenders, a few
  sente pieces near it, pieces in sente's hand, the rest in gote's hand or none, sente's
  king in a far corner), searched for positions where a pawn drop would mate but is
  illegal (uchifuzume), and for more short mates and checks that run out.

The set is filled bucket by bucket (see ``QUOTAS``) in a seeded order, so the same
arguments and games give the same file. Columns (tab separated):

    sfen  verdict  cshogi_plies  cshogi_nodes  tag  source  cshogi_pv

``tag`` is the bucket; ``cshogi_plies`` is 0 and ``cshogi_pv`` is ``-`` for ``nomate``.

Usage: scripts/ref/make_tsume_set.py [--seed 1] [--nodes 1000000] [--runs /work/main/runs]
                                     [--out data/tsume/reference.tsv] [--max-minutes 30]
"""
import argparse
import collections
import glob
import importlib.metadata
import json
import os
import random
import sys
import time

import cshogi

# Bucket -> how many positions it gets.
QUOTAS = collections.OrderedDict(
    [
        ("mate-3-5", 40),
        ("mate-7-9", 30),
        ("mate-11-13", 30),
        ("mate-15-19", 30),
        ("mate-21-23", 20),
        ("mate-25+", 30),
        ("nomate-checks", 45),
        ("nomate-uchifuzume", 15),
        ("nomate-nocheck", 5),
    ]
)

TOTALS = {"K": 2, "R": 2, "B": 2, "G": 4, "S": 4, "N": 4, "L": 4, "P": 18}
HAND_ORDER = "RBGSNLP"


def mate_bucket(plies):
    for lo, hi, name in [(3, 5, "mate-3-5"), (7, 9, "mate-7-9"), (11, 13, "mate-11-13"),
                         (15, 19, "mate-15-19"), (21, 23, "mate-21-23")]:
        if lo <= plies <= hi:
            return name
    return "mate-25+" if plies >= 25 else None


def is_mated(board):
    return board.is_check() and not any(True for _ in board.legal_moves)


def verify_mate(sfen, usi_moves):
    """The line is legal, the attacker checks with every move, and it ends in mate."""
    board = cshogi.Board(sfen)
    attacker = board.turn
    if len(usi_moves) % 2 == 0:
        return False
    for u in usi_moves:
        m = board.move_from_usi(u)
        if m == 0 or not board.is_legal(m):
            return False
        mover = board.turn
        board.push(m)
        if mover == attacker and not board.is_check():
            return False
    return board.turn != attacker and is_mated(board)


def gives_check_moves(board):
    out = []
    for m in board.legal_moves:
        board.push(m)
        check = board.is_check()
        board.pop()
        if check:
            out.append(m)
    return out


def pawn_drop_mates(board):
    """Pawn drops that would mate if they were legal (they are not: uchifuzume)."""
    if board.pieces_in_hand[board.turn][cshogi.HPAWN] == 0:
        return []
    out = []
    sente = board.turn == cshogi.BLACK
    own_pawn = cshogi.BPAWN if sente else cshogi.WPAWN
    files_with_pawn = {sq // 9 for sq in range(81) if board.piece(sq) == own_pawn}
    for sq in range(81):
        f, r = sq // 9, sq % 9
        if board.piece(sq) != cshogi.NONE or f in files_with_pawn or r == (0 if sente else 8):
            continue
        m = board.drop_move(sq, cshogi.PAWN)
        if board.is_legal(m):
            continue
        board.push(m)
        mated = is_mated(board)
        board.pop()
        if mated:
            out.append(cshogi.move_to_usi(m))
    return out


# How deep cshogi's fixed-depth search confirms a "no mate".
CONFIRM_PLIES = 13
# Positions left out, by reason.
DROPPED = collections.Counter()


def label(dfpn, board, nodes):
    """('mate', pv, nodes) or ('nomate', None, nodes); None when undecided, when the PV
    does not check out, or when cshogi's two searches disagree."""
    found = dfpn.search(board)
    searched = dfpn.searched_node
    if found:
        pv = [cshogi.move_to_usi(m) for m in dfpn.get_pv(board)]
        if not verify_mate(board.sfen(), pv):
            DROPPED["mate PV does not check out"] += 1
            return None
        return "mate", pv, searched
    if searched >= nodes:
        DROPPED["node limit"] += 1
        return None
    if board.mate_move_in_1ply() or board.mate_move(CONFIRM_PLIES):
        DROPPED[f"DfPn no mate, mate_move({CONFIRM_PLIES}) mate"] += 1
        return None
    return "nomate", None, searched


def tag_for(board, verdict, pv):
    if verdict == "mate":
        return mate_bucket(len(pv))
    if pawn_drop_mates(board):
        return "nomate-uchifuzume"
    return "nomate-checks" if gives_check_moves(board) else "nomate-nocheck"


def game_records(runs):
    out = []
    for path in sorted(glob.glob(os.path.join(runs, "*", "games.jsonl"))):
        run = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            for line in f:
                g = json.loads(line)
                if g.get("variant") == "shogi" and g.get("reason") == "checkmate":
                    out.append((run, g))
    return out


def game_candidates(rng, games):
    """(sfen, source) of positions before the ends of the games, in a seeded order."""
    order = list(range(len(games)))
    rng.shuffle(order)
    for gi in order:
        run, g = games[gi]
        moves = g["moves"]
        n = len(moves)
        offsets = [rng.choice(range(3, 12, 2)), rng.choice(range(13, 26, 2)), rng.choice(range(27, 62, 2)),
                   rng.choice(range(2, 21, 2))]
        for k in offsets:
            if k >= n:
                continue
            board = cshogi.Board(g["start"])
            for m in moves[: n - k]:
                board.push_usi(m)
            if board.is_check():
                continue
            yield board, f"game {run} #{g['game']} ply {n - k} of {n}"


def quietly(f):
    """f(), with the C++ side's stdout closed (cshogi's is_ok prints a board it rejects)."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        return f()
    finally:
        os.dup2(saved, 1)
        os.close(devnull)
        os.close(saved)


def built_position(rng):
    """A random tsume-like position with sente to move, or None if it came out invalid."""
    cells = {}
    used = collections.Counter()

    def put(f, r, letter, promoted=False):
        if not (1 <= f <= 9 and 1 <= r <= 9) or (f, r) in cells:
            return False
        base = letter.upper()
        if used[base] >= TOTALS[base]:
            return False
        sente = letter.isupper()
        rank_from_far = r if sente else 10 - r  # 1 = the far rank for the piece's owner
        if not promoted and ((base in "PL" and rank_from_far == 1) or (base == "N" and rank_from_far <= 2)):
            return False
        if base == "P" and not promoted:
            if any(c == letter for (ff, _), c in cells.items() if ff == f):
                return False
        cells[(f, r)] = ("+" if promoted else "") + letter
        used[base] += 1
        return True

    kf, kr = rng.randint(1, 9), rng.choice([1, 1, 1, 2, 2, 3])
    put(kf, kr, "k")
    put(rng.choice([1, 9]), 9, "K")
    for _ in range(rng.randint(0, 4)):
        letter = rng.choice("gsnlpbr" if rng.random() < 0.2 else "gsnlp")
        put(kf + rng.randint(-2, 2), kr + rng.randint(0, 2), letter)
    for _ in range(rng.randint(1, 3)):
        letter = rng.choice("GSNLPRB")
        promoted = letter in "RBSNLP" and rng.random() < 0.3
        put(kf + rng.randint(-3, 3), kr + rng.randint(0, 4), letter, promoted)
    hand = collections.Counter()
    for _ in range(rng.randint(1, 4)):
        base = rng.choice("RBGGSSNLPPP")
        if used[base] + hand[base] < TOTALS[base]:
            hand[base] += 1
    rest = collections.Counter()
    if rng.random() < 0.7:
        for base in HAND_ORDER:
            rest[base] = TOTALS[base] - used[base] - hand[base]
    rows = []
    for r in range(1, 10):
        row, empty = "", 0
        for f in range(9, 0, -1):
            c = cells.get((f, r))
            if c is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += c
        rows.append(row + (str(empty) if empty else ""))
    hands = "".join((str(hand[b]) if hand[b] > 1 else "") + b for b in HAND_ORDER if hand[b])
    hands += "".join((str(rest[b]) if rest[b] > 1 else "") + b.lower() for b in HAND_ORDER if rest[b])
    sfen = f"{'/'.join(rows)} b {hands or '-'} 1"
    board = cshogi.Board(sfen)
    if not quietly(board.is_ok) or board.is_check():
        return None
    # Gote (not to move) must not be in check.
    gote = cshogi.Board(sfen.replace(" b ", " w ", 1))
    if gote.is_check():
        return None
    return board


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=1_000_000, help="cshogi DfPn node limit")
    ap.add_argument("--runs", default="/work/main/runs")
    ap.add_argument("--out", default="data/tsume/reference.tsv")
    ap.add_argument("--max-minutes", type=float, default=30)
    ap.add_argument("--built-tries", type=int, default=400_000, help="random positions to try")
    ap.add_argument("--built-ordinary", type=int, default=150, help="ordinary built positions to label")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    deadline = time.time() + 60 * args.max_minutes
    dfpn = cshogi.DfPn(nodes=args.nodes)
    chosen = collections.OrderedDict((b, []) for b in QUOTAS)
    seen = set()
    labelled = 0

    def consider(board, source, cap=1.0):
        """Labels the position and keeps it if its bucket has room (`cap`: the share of
        each bucket but uchifuzume's that this source may fill)."""
        nonlocal labelled
        key = board.sfen().rsplit(" ", 1)[0]
        if key in seen:
            return
        seen.add(key)
        labelled += 1
        result = label(dfpn, board, args.nodes)
        if result is None:
            return
        verdict, pv, searched = result
        tag = tag_for(board, verdict, pv)
        share = 1.0 if tag == "nomate-uchifuzume" else cap
        if tag is None or len(chosen[tag]) >= QUOTAS[tag] * share:
            return
        chosen[tag].append((board.sfen(), verdict, len(pv) if pv else 0, searched, tag, source, pv))

    def full(tags):
        return all(len(chosen[t]) >= QUOTAS[t] for t in tags)

    # Built positions first: the uchifuzume bucket needs a hunt (only positions with a
    # pawn drop that would mate are labelled until it is full or half the tries are
    # spent); then ordinary ones, which fill at most a third of any other bucket.
    ordinary = 0
    for i in range(args.built_tries):
        if time.time() > deadline or ordinary >= args.built_ordinary:
            break
        board = built_position(rng)
        if board is None:
            continue
        if pawn_drop_mates(board):
            if not full(["nomate-uchifuzume"]):
                consider(board, f"built seed {args.seed} try {i}", cap=1 / 3)
        elif full(["nomate-uchifuzume"]) or i >= args.built_tries // 2:
            ordinary += 1
            consider(board, f"built seed {args.seed} try {i}", cap=1 / 3)
    print(f"built: {dict((t, len(v)) for t, v in chosen.items())}", file=sys.stderr)

    games = game_records(args.runs)
    for board, source in game_candidates(rng, games):
        if time.time() > deadline or full(QUOTAS):
            break
        consider(board, source)
        if labelled % 50 == 0:
            print(f"{labelled} labelled: {dict((t, len(v)) for t, v in chosen.items())}", file=sys.stderr)

    rows = [r for t in QUOTAS for r in chosen[t]]
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    version = importlib.metadata.version("cshogi")
    with open(args.out + ".tmp", "w") as f:
        f.write("# koma tsume reference v1\n")
        f.write(f"# made by scripts/ref/make_tsume_set.py --seed {args.seed} --nodes {args.nodes}; "
                f"labels from cshogi {version} DfPn(nodes={args.nodes}) (mate: its PV, replayed and checked "
                f"with cshogi; nomate: disproved within the node limit and no mate_move({CONFIRM_PLIES}))\n")
        f.write("# left out: " + (", ".join(f"{k} {v}" for k, v in sorted(DROPPED.items())) or "none") + "\n")
        f.write("# counts: " + ", ".join(f"{t} {len(v)}" for t, v in chosen.items()) + "\n")
        f.write("# sfen\tverdict\tcshogi_plies\tcshogi_nodes\ttag\tsource\tcshogi_pv\n")
        for sfen, verdict, plies, searched, tag, source, pv in rows:
            f.write(f"{sfen}\t{verdict}\t{plies}\t{searched}\t{tag}\t{source}\t{' '.join(pv) if pv else '-'}\n")
    os.replace(args.out + ".tmp", args.out)
    print(f"{len(rows)} positions ({labelled} labelled) -> {args.out}: "
          + ", ".join(f"{t} {len(v)}" for t, v in chosen.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
