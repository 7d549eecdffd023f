#!/usr/bin/env python3
"""Cross-check koma's sho shogi move generator against pyffish (variant shoshogi).

Plays --games random games of up to --plies plies with koma's generator
(`koma moves --variant sho --notation xboard`; pyffish uses the same square
names: files a.. from the first mover's left, ranks 1.. from its side, `+`
to promote), and at every ply compares koma's legal moves with
`pyffish.legal_moves("shoshogi", start, moves)`. A game stops when koma's
`koma outcome` says it is over (royal capture, bare king, mate, repetition).

Known, documented difference (RULES.md section 2, rules/README.md): with a
lone king in check, promoting the drunk elephant gives two royals and is
legal for koma (Sjaak II), not for pyffish. Differences that consist only of
such elephant promotions are counted separately, not as failures.

Needs pyffish (`.venv/bin/python -m pip install pyffish`) and a release
build of koma. Writes every --sample-th compared position with pyffish's list
to --out (`startpos moves <xboard moves>\\t<sorted moves>`).

  .venv/bin/python scripts/ref/sho_crosscheck.py --games 40 --plies 150 --out data/moves/moves-sho-random.tsv
"""
import argparse
import json
import os
import random
import subprocess
import sys

import pyffish as sf

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
KOMA = os.environ.get("KOMA", os.path.join(ROOT, "target/release/koma"))
VARIANT = "shoshogi"


def fmt_position(moves):
    return "startpos" + (" moves " + " ".join(moves) if moves else "")


def koma(args, lines):
    p = subprocess.run([KOMA] + args, input="\n".join(lines) + "\n", capture_output=True, text=True)
    out = p.stdout.splitlines()
    if len(out) != len(lines):
        raise RuntimeError(f"koma {args}: {len(out)} answers for {len(lines)} lines: {p.stderr[:500]}")
    return out


def koma_moves(lines):
    return [sorted(l.split("\t")[1].split()) if "\t" in l else None
            for l in koma(["moves", "--variant", "sho", "--notation", "xboard"], lines)]


def koma_outcomes(lines):
    return koma(["outcome", "--variant", "sho", "--notation", "xboard"], lines)


def square_of(sq):
    return ord(sq[0]) - 97, int(sq[1:])


def elephant_squares(fen):
    """Squares (file index, rank) of the side to move's unpromoted elephants, and its royal count."""
    board, side = fen.split()[0], fen.split()[1]
    mine = str.isupper if side == "w" else str.islower
    elephants, royals = [], 0
    for r, row in enumerate(board.split("/")):
        rank = 9 - r
        f = 0
        i = 0
        while i < len(row):
            c = row[i]
            if c.isdigit():
                f += int(c)
                i += 1
                continue
            promoted = c == "+"
            if promoted:
                i += 1
                c = row[i]
            if mine(c):
                if c.upper() == "K" or (c.upper() == "E" and promoted):
                    royals += 1
                if c.upper() == "E" and not promoted:
                    elephants.append((f, rank))
            f += 1
            i += 1
    return elephants, royals


def documented(fen, missing, extra):
    """Only elephant promotions that pyffish forbids with a lone king in check."""
    if missing or not extra:
        return False
    elephants, royals = elephant_squares(fen)
    if royals != 1 or not sf.gives_check(VARIANT, fen, []):
        return False
    return all(m.endswith("+") and square_of(m[:2]) in elephants for m in extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--plies", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--capture-bias", type=float, default=0.3)
    ap.add_argument("--sample", type=int, default=10)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    start = sf.start_fen(VARIANT)
    games = [[] for _ in range(a.games)]
    live = list(range(a.games))
    stats = {"games": a.games, "positions": 0, "moves": 0, "differing": 0, "documented_differences": 0}
    rows, ends = [], {}
    while live:
        lines = [fmt_position(games[g]) for g in live]
        lists = koma_moves(lines)
        outcomes = koma_outcomes(lines)
        still = []
        for g, ours, outcome in zip(live, lists, outcomes):
            moves = games[g]
            theirs = sorted(sf.legal_moves(VARIANT, start, moves))
            stats["positions"] += 1
            stats["moves"] += len(theirs)
            missing = sorted(set(theirs) - set(ours or []))
            extra = sorted(set(ours or []) - set(theirs))
            if missing or extra:
                fen = sf.get_fen(VARIANT, start, moves)
                if documented(fen, missing, extra):
                    stats["documented_differences"] += 1
                    # Do not play them: pyffish could not follow the game.
                    ours = [m for m in ours if m not in extra]
                else:
                    stats["differing"] += 1
                    print(f"game {g + 1} ply {len(moves)}: missing {missing} extra {extra}  [{fen}] [{fmt_position(moves)}]")
            elif len(moves) % a.sample == 0 and moves:
                rows.append(f"{fmt_position(moves)}\t{' '.join(theirs)}")
            if outcome != "none ongoing" or not ours or len(moves) >= a.plies:
                ends[g] = outcome
                continue
            pick = ours
            if rng.random() < a.capture_bias:
                fen = sf.get_fen(VARIANT, start, moves)
                caps = [m for m in ours if sf.is_capture(VARIANT, fen, [], m)]
                pick = caps or ours
            moves.append(rng.choice(pick))
            still.append(g)
        live = still
    stats["plies"] = sum(map(len, games))
    stats["ends"] = {k: sum(1 for v in ends.values() if v == k) for k in sorted(set(ends.values()))}
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
        print(f"wrote {a.out}: {len(rows)} positions", file=sys.stderr)
    print(json.dumps(stats))
    sys.exit(1 if stats["differing"] else 0)


if __name__ == "__main__":
    main()
