#!/usr/bin/env python3
"""Make data/fixtures/endings-shogi.tsv: game-end cases for standard shogi.

Format (as shared/testdata/endings-shogi.tsv, what `koma outcome` prints):

    <sfen>\t<usi moves, space separated>\t<winner> <reason>

winner: sente | gote | draw | none (none only with reason ongoing).
A declaration is the token `win` as the last move. A declaration that does
not meet the 27-point rule is listed with the output

    error illegal_move win ply <n>

where n is the 1-based index of the `win` token in the move list.

Cases made here (see data/fixtures/README.md for the derivations):
  * repetition draws (fourfold) found as 4-ply cycles of reversible quiet
    moves in positions from random games, with and without a prefix; the
    same lines cut after 8 and 11 plies are `none ongoing` (3 occurrences);
  * perpetual check, with sente and with gote as the checker (the checker
    loses), found as 4-ply cycles where every move of one side gives check;
  * a cycle of quiet moves followed by two checking cycles: the checker did
    not give check with every move since the first occurrence: draw;
  * declaration (27-point rule): valid, and almost-valid (one point short,
    nine pieces in the zone, in check, king outside the zone);
  * no_moves: the side to move has no legal move and is not in check.

Every line is re-judged by an independent implementation of the rules in
this script on top of cshogi's move generator (occurrence counting with
SFEN keys, check flags from cshogi), and cross-checked with cshogi's
is_draw()/is_nyugyoku() and pyffish's is_optional_game_end()/legal_moves()
where those apply (their known quirks are accounted for, see README).

Usage: scripts/ref/gen_endings.py [--seed 5] [--out data/fixtures/endings-shogi.tsv]
"""
import argparse
import random
import sys

import cshogi
import pyffish

# ---------------------------------------------------------------- helpers


def key(board):
    """Position identity for repetition: board, side to move, hands (SFEN without move number)."""
    return board.sfen().rsplit(" ", 1)[0]


def usi(m):
    return cshogi.move_to_usi(m)


def to_fsf(sfen):
    """USI SFEN -> Fairy-Stockfish FEN for pyffish's `shogi` variant."""
    b, side, hand, num = sfen.split()
    h = ""
    if hand != "-":
        n = ""
        for c in hand:
            if c.isdigit():
                n += c
            else:
                h += c * (int(n) if n else 1)
                n = ""
    return f"{b}[{h}] {'w' if side == 'b' else 'b'} - - 0 {num}"


def usi_to_fsf(m):
    def sq(s):
        return "abcdefghi"[9 - int(s[0])] + str(9 - (ord(s[1]) - 97))
    if m[1] == "*":
        return f"{m[0]}@{sq(m[2:4])}"
    return sq(m[0:2]) + sq(m[2:4]) + m[4:]


ZONE = {cshogi.BLACK: range(0, 3), cshogi.WHITE: range(6, 9)}  # cshogi rank index 0 = rank a
POINTS = {cshogi.ROOK: 5, cshogi.BISHOP: 5, cshogi.PROM_ROOK: 5, cshogi.PROM_BISHOP: 5}
HAND_POINTS = [1, 1, 1, 1, 1, 5, 5]  # cshogi hand order: P L N S G B R


def declaration_ok(board):
    """The CSA 27-point declaration rule, implemented here from the rule text."""
    us = board.turn
    ksq = board.king_square(us)
    if ksq % 9 not in ZONE[us] or board.is_check():
        return False
    n, pts = 0, 0
    for sq in range(81):
        p = board.piece(sq)
        if not p or p == cshogi.BKING or p == cshogi.WKING:
            continue
        color = cshogi.BLACK if p < 16 else cshogi.WHITE
        if color != us or sq % 9 not in ZONE[us]:
            continue
        n += 1
        pts += POINTS.get(cshogi.piece_to_piece_type(p), 1)
    pts += sum(c * v for c, v in zip(board.pieces_in_hand[us], HAND_POINTS))
    return n >= 10 and pts >= (28 if us == cshogi.BLACK else 27)


def judge(sfen, moves):
    """Our own verdict for a line: the text `koma outcome` should print."""
    board = cshogi.Board(sfen)
    keys = [key(board)]
    checks = [None]  # checks[i]: did move i-1 give check
    for i, tok in enumerate(moves):
        if tok == "win":
            assert i == len(moves) - 1, "win must be the last token"
            if declaration_ok(board):
                return ("sente" if board.turn == cshogi.BLACK else "gote") + " declaration"
            return f"error illegal_move win ply {i + 1}"
        m = board.move_from_usi(tok)
        assert m and board.is_legal(m), f"illegal move {tok} at ply {i + 1} in {sfen}"
        board.push(m)
        keys.append(key(board))
        checks.append(board.is_check())
        if keys.count(keys[-1]) >= 4:
            assert i == len(moves) - 1, "game already over by repetition"
    k = keys[-1]
    occ = [i for i, x in enumerate(keys) if x == k]
    if len(occ) >= 4:
        first = occ[0]
        n = len(keys) - 1  # moves made
        # moves first..n-1 (0-based move index j gives position j+1); mover of move j
        start_turn = cshogi.Board(sfen).turn
        for checker in (cshogi.BLACK, cshogi.WHITE):
            mv = [j for j in range(first, n) if (start_turn if j % 2 == 0 else 1 - start_turn) == checker]
            if mv and all(checks[j + 1] for j in mv):
                return ("gote" if checker == cshogi.BLACK else "sente") + " perpetual_check"
        return "draw repetition"
    if not any(True for _ in board.legal_moves):
        winner = "gote" if board.turn == cshogi.BLACK else "sente"
        return winner + (" checkmate" if board.is_check() else " no_moves")
    return "none ongoing"


def cross_check(sfen, moves, verdict):
    """Compare with cshogi and pyffish; return notes (strings) about their answers."""
    notes = []
    board = cshogi.Board(sfen)
    real = [t for t in moves if t != "win"]
    for t in real:
        board.push_usi(t)
    if moves and moves[-1] == "win":
        ny = board.is_nyugyoku()
        ok = verdict.endswith("declaration")
        if bool(ny) != ok:
            raise AssertionError(f"cshogi is_nyugyoku {ny} vs ours {verdict}: {sfen}")
        notes.append(f"cshogi is_nyugyoku={bool(ny)}")
        return notes
    fen = to_fsf(sfen)
    fm = [usi_to_fsf(t) for t in real]
    end, val = pyffish.is_optional_game_end("shogi", fen, fm)
    d = board.is_draw()
    names = {cshogi.NOT_REPETITION: "none", cshogi.REPETITION_DRAW: "draw", cshogi.REPETITION_WIN: "win",
             cshogi.REPETITION_LOSE: "lose", cshogi.REPETITION_SUPERIOR: "superior",
             cshogi.REPETITION_INFERIOR: "inferior"}
    notes.append(f"cshogi is_draw={names[d]}")
    notes.append(f"pyffish optional_end={end},{val}")
    reason = verdict.split()[-1]
    if reason in ("repetition", "perpetual_check"):
        if not end:
            raise AssertionError(f"pyffish sees no game end: {sfen} {moves}")
        if reason == "repetition" and val != 0:
            notes.append("pyffish DISAGREES (not a draw)")
        if reason == "perpetual_check":
            # value is from the side to move's view; the checker made the last move or not
            side_to_move_wins = verdict.split()[0] == ("sente" if board.turn == cshogi.BLACK else "gote")
            if (val > 0) != side_to_move_wins:
                notes.append("pyffish DISAGREES on the winner")
    if reason in ("no_moves", "checkmate"):
        lm = pyffish.legal_moves("shogi", fen, fm)
        gc = pyffish.gives_check("shogi", fen, fm)
        if lm or gc != (reason == "checkmate"):
            raise AssertionError(f"pyffish: moves {lm} check {gc}: {sfen}")
        notes.append("pyffish: no legal moves")
    return notes


# ---------------------------------------------------------------- searches


def random_position(rng, plies):
    board = cshogi.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves or board.is_game_over():
            return None
        w = [4.0 if cshogi.move_cap(m) else 1.0 for m in moves]
        board.push(rng.choices(moves, w)[0])
    if board.is_check() or board.is_draw() != cshogi.NOT_REPETITION:
        return None
    return board


def reversible(board, m):
    return not cshogi.move_is_drop(m) and not cshogi.move_cap(m) and not cshogi.move_is_promotion(m)


def reverse(board, m):
    u = usi(m)
    r = board.move_from_usi(u[2:4] + u[0:2])
    return r if r and board.is_legal(r) else None


def find_cycle(board, rng, sente_checks, gote_checks, tries=4000):
    """A 4-ply cycle m1 m2 r1 r2 back to the same position; *_checks: True = every
    move of that side gives check, False = none does, None = don't care."""
    want = {board.turn: sente_checks, 1 - board.turn: gote_checks}
    start = key(board)

    def ok(b, m):
        if not reversible(b, m):
            return False
        b.push(m)
        c = b.is_check()
        b.pop()
        w = want[b.turn]
        return w is None or w == c

    m1s = [m for m in board.legal_moves if ok(board, m)]
    rng.shuffle(m1s)
    for m1 in m1s[:40]:
        board.push(m1)
        m2s = [m for m in board.legal_moves if ok(board, m)]
        rng.shuffle(m2s)
        for m2 in m2s[:40]:
            board.push(m2)
            r1 = reverse(board, m1)
            if r1 and ok(board, r1):
                board.push(r1)
                r2 = reverse(board, m2)
                if r2 and ok(board, r2):
                    board.push(r2)
                    same = key(board) == start
                    board.pop()
                    if same:
                        board.pop(); board.pop(); board.pop()
                        return [usi(m1), usi(m2), usi(r1), usi(r2)]
                board.pop()
            board.pop()
        board.pop()
    return None


def find_positions(rng, want, sente_checks, gote_checks, side):
    """Random positions (side to move `side`) that have a cycle of the wanted kind."""
    for _ in range(20000):
        b = random_position(rng, rng.randrange(30, 140))
        if b is None or b.turn != side:
            continue
        cyc = find_cycle(b, rng, sente_checks if side == cshogi.BLACK else gote_checks,
                         gote_checks if side == cshogi.BLACK else sente_checks)
        if cyc:
            yield b, cyc
            want -= 1
            if want == 0:
                return


def find_no_moves(rng, n):
    """Positions after a move where the side to move has no legal move and is not in check:
    gote king (and maybe a pinned/blocked gote piece) against a few sente pieces."""
    out = []
    pieces = ["G", "S", "+P", "R", "B", "N", "L", "+R", "+B", "P"]
    seen = set()
    for _ in range(400000):
        if len(out) >= n:
            break
        board = [[None] * 9 for _ in range(9)]
        ks = (rng.randrange(9), rng.randrange(3))  # gote king near its back rank
        board[ks[1]][ks[0]] = "k"
        for _ in range(rng.randrange(2, 4)):
            f, r = rng.randrange(9), rng.randrange(5)
            if board[r][f] is None:
                board[r][f] = rng.choice(pieces)
        if rng.random() < 0.5:  # a gote piece that may be pinned or blocked
            f, r = rng.randrange(9), rng.randrange(4)
            if board[r][f] is None:
                board[r][f] = rng.choice(["p", "l", "s", "g"])
        board[8][rng.randrange(9)] = board[8][rng.randrange(9)] or "K"
        rows = []
        for r in range(9):
            s, e = "", 0
            for f in range(9):
                p = board[r][f]
                if p is None:
                    e += 1
                else:
                    if e:
                        s += str(e)
                    e = 0
                    s += p
            if e:
                s += str(e)
            rows.append(s)
        sfen = "/".join(rows) + " b - 1"
        if "K" not in sfen:
            continue
        try:
            b = cshogi.Board(sfen)
        except Exception:
            continue
        if not b.is_ok() or b.is_check() or sfen.count("P") > 1:
            continue
        if any(c in rows[0] for c in "PLN") or "N" in rows[1]:
            continue  # sente piece with no move
        # opponent must not be in check in the start position either
        b2 = cshogi.Board(sfen.replace(" b ", " w "))
        if b2.is_check():
            continue
        for m in b.legal_moves:
            b.push(m)
            if not b.is_check() and not any(True for _ in b.legal_moves):
                if sfen not in seen:
                    seen.add(sfen)
                    out.append((sfen, [usi(m)]))
                b.pop()
                break
            b.pop()
    return out


# ---------------------------------------------------------------- cases

# Declaration positions, built by hand (sente declares: king on 5b; gote: king on 5h).
# Sente: zone pieces +R +B and eight tokins = 10 pieces, 18 points; the hand adds points.
DECL = [
    # (comment, sfen, moves)
    ("sente exactly 28 points (18 zone + 10 hand), 10 pieces in zone, not in check",
     "+P+P+P+P1+P+P+P+P/4K2+R1/1+B7/9/9/9/9/9/k8 b 2G2S2N2L2P 1", ["win"]),
    ("sente 27 points: one short of 28", "+P+P+P+P1+P+P+P+P/4K2+R1/1+B7/9/9/9/9/9/k8 b 2G2S2N2L1P 1", ["win"]),
    ("sente 30 points but only 9 pieces in the zone (the 8th tokin is on 1d)",
     "+P+P+P+P1+P+P+P1/4K2+R1/1+B7/8+P/9/9/9/9/k8 b B2G2S2N2L 1", ["win"]),
    ("sente 28 points, 10 pieces, but in check from the gote rook on 5e",
     "+P+P+P+P1+P+P+P+P/4K2+R1/1+B7/9/4r4/9/9/9/k8 b 2G2S2N2L2P 1", ["win"]),
    ("sente king on 5d, outside the zone, 28 points", "+P+P+P+P1+P+P+P+P/7+R1/1+B7/4K4/9/9/9/9/k8 b 2G2S2N2L2P 1", ["win"]),
    ("sente king walks 5d-5c into the zone, gote plays 9i9h, then sente declares (ply 3)",
     "+P+P+P+P1+P+P+P+P/7+R1/1+B7/4K4/9/9/9/9/k8 b 2G2S2N2L2P 1", ["5d5c", "9i9h", "win"]),
    ("gote exactly 27 points (18 zone + 9 hand), 10 pieces in zone",
     "K8/9/9/9/9/9/7+b1/1+r2k4/+p+p+p+p1+p+p+p+p w 2g2s2n2l1p 1", ["win"]),
    ("gote 26 points: one short of 27", "K8/9/9/9/9/9/7+b1/1+r2k4/+p+p+p+p1+p+p+p+p w 2g2s2n2l 1", ["win"]),
    ("9a9b (tokin stays in the zone), 9i8h, then sente declares with 27 points: illegal at ply 3",
     "+P+P+P+P1+P+P+P+P/4K2+R1/1+B7/9/9/9/9/9/k8 b 2G2S2N2L1P 1", ["9a9b", "9i8h", "win"]),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", default="data/fixtures/endings-shogi.tsv")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    lines = []  # (sfen, moves, comment)

    # repetition draws: quiet cycles, sente and gote to move
    for side in (cshogi.BLACK, cshogi.WHITE):
        for b, cyc in find_positions(rng, 2, False, False, side):
            s = b.sfen()
            lines.append((s, cyc * 3, "quiet 4-ply cycle x3: 4th occurrence of the start position"))
            lines.append((s, cyc * 2, "same, 8 plies: only the 3rd occurrence (cshogi already says draw)"))
            lines.append((s, cyc * 2 + cyc[:3], "same, 11 plies: start position seen 3 times, game goes on"))
    # a prefix before the cycle: counting starts at the first occurrence of the repeated position
    for b, cyc in find_positions(rng, 1, False, False, cshogi.BLACK):
        # prefix: the random game's last two moves lead into the cycle's start position
        prefix = [usi(m) for m in b.history[-2:]]
        b.pop(); b.pop()
        lines.append((b.sfen(), prefix + cyc * 3,
                      "2-ply prefix, then a 4-ply cycle x3: the position after the prefix occurs a 4th time at ply 14"))
    # perpetual check: sente checks every move (gote wins), gote checks every move (sente wins).
    # Found with the checker to move; the same cycle started one ply later (the
    # non-checker to move, in check) is a second case for each side.
    for side in (cshogi.BLACK, cshogi.WHITE):
        sc, gc = side == cshogi.BLACK, side == cshogi.WHITE
        for b, cyc in find_positions(rng, 1, sc, gc, side):
            checker = "sente" if sc else "gote"
            lines.append((b.sfen(), cyc * 3, f"{checker} gives check with every move of the cycle x3: {checker} loses"))
            b.push_usi(cyc[0])
            rot = cyc[1:] + cyc[:1]
            lines.append((b.sfen(), rot * 3, f"same cycle from one ply later ({checker} to move second, "
                          f"the other side starts in check): {checker} loses"))
    # mixed: quiet cycle first, then checking cycles -> draw; and checking cycles throughout -> perpetual
    found = 0
    for _ in range(200000):
        if found >= 1:
            break
        b = random_position(rng, rng.randrange(30, 140))
        if b is None or b.turn != cshogi.BLACK:
            continue
        chk = find_cycle(b, rng, True, False)
        if not chk:
            continue
        quiet = find_cycle(b, rng, False, False)
        if not quiet:
            continue
        s = b.sfen()
        lines.append((s, quiet + chk * 2, "quiet cycle, then two cycles where sente checks every move: sente did not "
                      "check throughout since the first occurrence: draw (cshogi, judging the last cycle, says perpetual)"))
        lines.append((s, chk * 2 + quiet, "two checking cycles, then a quiet one: draw"))
        lines.append((s, chk * 3, "checking cycle x3: gote wins by perpetual check"))
        found += 1
    # declarations
    for comment, sfen, moves in DECL:
        lines.append((sfen, moves, comment))
    # no legal moves, not in check
    for sfen, moves in find_no_moves(rng, 3):
        lines.append((sfen, moves, "after the move, gote has no legal move and is not in check"))

    with open(a.out, "w") as f:
        for sfen, moves, comment in lines:
            v = judge(sfen, moves)
            notes = cross_check(sfen, moves, v)
            f.write(f"{sfen}\t{' '.join(moves)}\t{v}\n")
            print(f"{v:32s} | {comment} | {'; '.join(notes)}", file=sys.stderr)
    print(f"wrote {a.out}: {len(lines)} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
