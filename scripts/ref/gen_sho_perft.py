#!/usr/bin/env python3
"""Make data/fixtures/perft-sho-extra.txt: sho shogi perft 1-3 from pyffish.

Positions come from random sho shogi games played with pyffish's `shoshogi`
variant (Fairy-Stockfish rules; captures preferred so that games reach
endgames, promotions and king+prince positions). Format as
shared/testdata/perft-sho.txt:

    id <name>
    sfen <sfen>          (project SFEN: E/e elephant, +E/+e prince, hand -)
    perft 1 <n>
    perft 2 <n>
    perft 3 <n>
    <blank line>

Each count is cross-checked with Sjaak II (Debian `sjaakii`, variant
shoshogi, `perft 3`); positions where the two disagree are left out.

Left out too: any position whose perft-3 tree contains a node (depth 0, 1 or 2)
where the side to move has a single royal, is in check, and has an
unpromoted drunk elephant on or next to its promotion zone. There pyffish
forbids the elephant's promotion while Sjaak II (and RULES.md) allow it, so
pyffish's count would not be the project's.

Usage: scripts/ref/gen_sho_perft.py [--seed 9] [--n 12] [--out data/fixtures/perft-sho-extra.txt]
"""
import argparse
import random
import sys

import pyffish as sf

V = "shoshogi"


def royals_and_elephants(fen, white_to_move):
    board = fen.split()[0]
    rows = board.split("/")
    me_upper = white_to_move  # FSF 'w' = sente = upper case
    royals, near_zone_elephant = 0, False
    for r, row in enumerate(rows):
        i, prom = 0, False
        for c in row:
            if c.isdigit():
                i += int(c)
                continue
            if c == "+":
                prom = True
                continue
            mine = c.isupper() == me_upper
            if mine and (c in "Kk" or (c in "Ee" and prom)):
                royals += 1
            if mine and c in "Ee" and not prom:
                # sente's zone: rows 0-2 (one step away: row 3); gote's: rows 6-8 (row 5)
                if (me_upper and r <= 3) or (not me_upper and r >= 5):
                    near_zone_elephant = True
            prom = False
            i += 1
    return royals, near_zone_elephant


def risky(fen):
    wtm = fen.split()[1] == "w"
    royals, elephant = royals_and_elephants(fen, wtm)
    return royals == 1 and elephant and sf.gives_check(V, fen, [])


def perft_and_check(fen, depth, counts):
    """Fill counts[d] with perft(d) for d = 1..depth; return False if a risky node is met."""
    if risky(fen):
        return False
    moves = sf.legal_moves(V, fen, [])
    counts[1] = counts.get(1, 0) + len(moves)
    if depth == 1:
        return True
    for m in moves:
        sub = {}
        child = sf.get_fen(V, fen, [m])
        if not perft_and_check(child, depth - 1, sub):
            return False
        for d, n in sub.items():
            counts[d + 1] = counts.get(d + 1, 0) + n
    return True


def sjaak_perft(fen, depth=3, exe="/usr/games/sjaakii"):
    """Sjaak II's perft counts {1: n, ...} for an FSF-style sho FEN (board + w/b)."""
    import re
    import subprocess
    board, side = fen.split()[:2]
    cmds = f"xboard\nprotover 2\nvariant shoshogi\nforce\nsetboard {board} {side} 0 1\nperft {depth}\nquit\n"
    out = subprocess.run([exe], input=cmds, capture_output=True, text=True, timeout=120).stdout
    return {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^\s*(\d)\s+(\d+)\s+[\d.]+\s", out, re.M)}


def to_sfen(fen, ply):
    board, side = fen.split()[:2]
    board = board.split("[")[0]
    return f"{board} {'b' if side == 'w' else 'w'} - {ply}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--out", default="data/fixtures/perft-sho-extra.txt")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    blocks, skipped = [], 0
    kinds = {}
    while len(blocks) < a.n:
        fen = sf.start_fen(V)
        target = rng.choice([rng.randrange(10, 40), rng.randrange(40, 120), rng.randrange(120, 300)])
        ply = 0
        while ply < target:
            moves = sf.legal_moves(V, fen, [])
            if not moves:
                break
            caps = [m for m in moves if sf.is_capture(V, fen, [], m)]
            m = rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(moves)
            fen = sf.get_fen(V, fen, [m])
            ply += 1
            if sf.is_immediate_game_end(V, fen, [])[0]:
                break
        if not sf.legal_moves(V, fen, []) or sf.is_immediate_game_end(V, fen, [])[0]:
            continue
        counts = {}
        if not perft_and_check(fen, 3, counts):
            skipped += 1
            continue
        sj = sjaak_perft(fen)
        if sj != counts:
            print(f"# Sjaak II disagrees, left out: {fen} pyffish {counts} sjaak {sj}", file=sys.stderr)
            skipped += 1
            continue
        board = fen.split()[0]
        tag = ("prince" if "+E" in board or "+e" in board else
               "check" if sf.gives_check(V, fen, []) else
               "opening" if ply < 40 else "middlegame" if ply < 120 else "endgame")
        kinds[tag] = kinds.get(tag, 0) + 1
        sfen = to_sfen(fen, ply + 1)
        blocks.append(f"id random-{tag}-{kinds[tag]}\nsfen {sfen}\n" +
                      "".join(f"perft {d} {counts[d]}\n" for d in (1, 2, 3)))
        print(f"{sfen}  {counts}", file=sys.stderr)
    with open(a.out, "w") as f:
        f.write("\n".join(blocks))
    print(f"wrote {a.out}: {len(blocks)} positions ({skipped} left out: risky or Sjaak II disagrees)", file=sys.stderr)


if __name__ == "__main__":
    main()
