#!/usr/bin/env python3
"""Cross-check koma's dai (and sho) shogi move generator against HaChu.

Uses the HaChu driver of `scripts/ref/hachu.py` (process handling, root move
lists from the debug output of the illegal `usermove p16p16`) and koma's own
`koma moves --notation xboard` for our lists. Needs a release build of koma
(`cargo build --release -p koma -p koma-net`) and Debian's `hachu`.

HaChu's list is taken as `hachu.py` takes it (raw root list, repetition-
banned moves and empty slots dropped) plus the bare deferral `X` of each
listed promotion `X+`, kept only when HaChu accepts `X` AND executes it
differently from `X+`: the `# makemove <hex>` word differs. (HaChu executes
a bare move as the promotion where deferring is not allowed, e.g. a lance to
the last rank: then `X` is an alias, not a move.)

Subcommands:
  trace    for each input line `startpos moves ...`, walk the game and
           compare the lists at every ply (or every --step plies); report
           every difference; with --out, write every --sample-th position
           with HaChu's list (e.g. the HaChu self-play games of
           moves-dai.tsv, longest line of each game, make
           data/moves/moves-dai-selfplay.tsv).
  random   play --games random games of --plies plies with koma's generator
           (moves picked at random from koma's list, captures preferred with
           probability --capture-bias), check that HaChu accepts every move
           and that the lists agree at every ply; write every --sample-th
           position with HaChu's list to --out (`<position>\\t<moves>`, the
           form of data/moves/moves-dai.tsv) and the games to --games-out.

Examples:
  scripts/ref/dai_crosscheck.py random --games 20 --plies 150 --out data/moves/moves-dai-random.tsv
  cut -f1 data/moves/moves-dai.tsv | scripts/ref/dai_crosscheck.py trace
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hachu import HaChu, DaiTracker, parse_position, fmt_position, read_lines  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
KOMA = os.environ.get("KOMA", os.path.join(ROOT, "target/release/koma"))


PROMOTE_BIT = 0x00800000  # HaChu's promotion flag in the `# makemove <hex>` word


def made_word(h, mv):
    """Play mv, take it back (`undo`); return HaChu's `# makemove` word as an int, or None if rejected."""
    h.send(f"usermove {mv}")
    lines = h.sync()
    if any(l.startswith("Illegal move") for l in lines):
        return None
    words = [l.split()[2] for l in lines if l.startswith("# makemove ")]
    h.send("undo")
    h.sync()
    return int(words[-1], 16) if words else 0


def hachu_moves(h):
    """HaChu's list plus real bare deferrals; returns (moves, probed)."""
    raw = h.raw_list()
    have = set(raw)
    extra = []
    probed = False
    for mv in raw:
        if not mv.endswith("+") or mv[:-1] in have:
            continue
        probed = True
        word = made_word(h, mv[:-1])
        if word is not None and not word & PROMOTE_BIT:
            extra.append(mv[:-1])
    return sorted(have | set(extra)), probed


def royal_capturable(tr, ours):
    """HaChu's root search returns at once, listing nothing new, when the side to
    move can capture the opponent's only royal (or the opponent has none): its
    move list and its parsing of the next move are then stale. True in that case."""
    from hachu import sq_parse
    them = "w" if tr.stm == "b" else "b"
    kings = [sq for sq, (c, k, p) in tr.board.items() if c == them and k == "K"]
    princes = [sq for sq, (c, k, p) in tr.board.items() if c == them and k == "DE" and p]
    if kings and princes:
        return False
    targets = set(kings or princes)
    if not targets:
        return True
    for mv in ours or []:
        if mv == "@@@@":
            continue
        for leg in mv.rstrip("+").split(","):
            _, rest = sq_parse(leg)
            to, _ = sq_parse(rest)
            if to in targets:
                return True
    return False


def lance_deferred(tr):
    """An unpromoted lance in its zone: it deferred by bare input, which HaChu
    records only in ParseMove (`undo` replays without it)."""
    return any(k == "L" and not p and (r >= 11 if c == "b" else r <= 5)
               for (f, r), (c, k, p) in tr.board.items())


def koma_moves(variant, lines):
    """koma's xboard move lists for position lines, in order."""
    if not lines:
        return []
    p = subprocess.run([KOMA, "moves", "--variant", variant, "--notation", "xboard"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    out = []
    for line in p.stdout.splitlines():
        if line.startswith("error line"):
            out.append(None)
        else:
            out.append(sorted(line.split("\t")[1].split()) if "\t" in line else [])
    if len(out) != len(lines):
        raise RuntimeError(f"koma moves: {len(out)} answers for {len(lines)} lines: {p.stderr[:500]}")
    return out


def diff(ours, theirs):
    o, t = set(ours or []), set(theirs)
    return sorted(t - o), sorted(o - t)


def walk(h, variant, moves, step, stats, report, keep=None):
    """Replay `moves` in HaChu; compare lists at plies 0, step, 2*step, ... and the last.
    Stops where the side to move can capture the opponent's only royal (HaChu
    cannot list moves there). Returns (first rejected (ply, move, reason) or
    None, list of (ply, missing, extra), ply where the walk stopped early or None)."""
    plies = sorted(set(range(0, len(moves) + 1, step)) | {len(moves)})
    ours = dict(zip(range(len(moves) + 1), koma_moves(variant, [fmt_position(moves[:i]) for i in range(len(moves) + 1)])))
    tr = DaiTracker() if variant == "dai" else None
    h.new_game()
    diffs = []
    for i in range(len(moves) + 1):
        if tr is not None and royal_capturable(tr, ours[i]):
            stats["royal_capturable_stops"] += 1
            return None, diffs, i
        if i in plies:
            theirs, probed = hachu_moves(h)
            if probed and tr is not None and lance_deferred(tr):
                h.play(moves[:i])  # undo lost the lance's deferral: replay faithfully
            stats["positions"] += 1
            stats["moves"] += len(theirs)
            if keep is not None:
                keep[i] = theirs
            missing, extra = diff(ours[i], theirs)
            if missing or extra:
                diffs.append((i, missing, extra))
                report(i, missing, extra, theirs)
        if i == len(moves):
            break
        ok, reason = h.usermove(moves[i])
        stats["accepted"] += ok
        if not ok:
            return (i, moves[i], reason), diffs, None
        if tr is not None:
            tr.push(moves[i])
    return None, diffs, None


def cmd_trace(a):
    h = HaChu(a.variant)
    stats = {"positions": 0, "moves": 0, "accepted": 0, "royal_capturable_stops": 0}
    bad = 0
    rows, seen = [], set()
    for n, line in enumerate(read_lines(a.input), 1):
        moves = parse_position(line.split("\t")[0])
        def report(i, missing, extra, theirs):
            print(f"line {n} ply {i}: missing {missing} extra {extra}  [{fmt_position(moves[:i])}]")
        keep = {}
        rej, diffs, stop = walk(h, a.variant, moves, a.step, stats, report, keep)
        for i in range(a.sample, len(moves) + 1, a.sample) if a.out else ():
            if i in keep and fmt_position(moves[:i]) not in seen:
                seen.add(fmt_position(moves[:i]))
                rows.append(f"{fmt_position(moves[:i])}\t{' '.join(keep[i])}")
        if rej:
            print(f"line {n}: HaChu rejects ply {rej[0]} {rej[1]}: {rej[2]}")
        if stop is not None:
            print(f"line {n}: stopped at ply {stop}: a royal can be captured (HaChu lists nothing there)")
        bad += bool(rej or diffs)
    h.close()
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
        print(f"wrote {a.out}: {len(rows)} positions", file=sys.stderr)
    print(json.dumps({"games": n, "games_with_problems": bad, **stats}))
    sys.exit(1 if bad else 0)


def cmd_random(a):
    rng = random.Random(a.seed)
    games = [[] for _ in range(a.games)]
    trackers = [DaiTracker() if a.variant == "dai" else None for _ in range(a.games)]
    live = set(range(a.games))
    ends = {}
    for _ in range(a.plies):
        order = sorted(live)
        if not order:
            break
        lists = koma_moves(a.variant, [fmt_position(games[g]) for g in order])
        for g, lst in zip(order, lists):
            tr = trackers[g]
            if not lst:
                live.discard(g)
                ends[g] = "no moves"
                continue
            if tr is not None and royal_capturable(tr, lst):
                # The side to move would take the last royal: the game is over
                # (and HaChu cannot list moves here).
                live.discard(g)
                ends[g] = "royal capturable"
                continue
            pick = lst
            if tr is not None and rng.random() < a.capture_bias:
                caps = [m for m in lst if m != "@@@@" and ("," in m or captures(tr, m))]
                pick = caps or lst
            mv = rng.choice(pick)
            games[g].append(mv)
            if tr is not None:
                tr.push(mv)
    if a.games_out:
        with open(a.games_out, "w") as f:
            for g in games:
                f.write(fmt_position(g) + "\n")
    h = HaChu(a.variant)
    stats = {"positions": 0, "moves": 0, "accepted": 0, "royal_capturable_stops": 0}
    rows, problems = [], 0
    for n, moves in enumerate(games, 1):
        def report(i, missing, extra, theirs):
            print(f"game {n} ply {i}: missing {missing} extra {extra}  [{fmt_position(moves[:i])}]")
        keep = {}
        rej, diffs, stop = walk(h, a.variant, moves, a.step, stats, report, keep)
        if rej:
            print(f"game {n}: HaChu rejects ply {rej[0]} {rej[1]}: {rej[2]}")
        problems += bool(rej or diffs)
        print(f"game {n}: {len(moves)} plies ({ends.get(n - 1, 'ply limit')}), "
              f"{len(diffs)} differing positions", file=sys.stderr)
        if a.out:
            for i in range(a.sample, len(moves) + 1, a.sample):
                if i in keep:
                    rows.append(f"{fmt_position(moves[:i])}\t{' '.join(keep[i])}")
    h.close()
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
        print(f"wrote {a.out}: {len(rows)} positions", file=sys.stderr)
    print(json.dumps({"games": a.games, "plies": sum(map(len, games)),
                      "games_with_problems": problems, **stats}))
    sys.exit(1 if problems else 0)


def captures(tr, mv):
    from hachu import sq_parse
    body = mv.rstrip("+")
    a_, rest = sq_parse(body)
    b, _ = sq_parse(rest)
    p = tr.board.get(b)
    return p is not None and p[0] != tr.stm


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--variant", default="dai")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("trace")
    p.add_argument("--input", default="-")
    p.add_argument("--step", type=int, default=1)
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--out", default="")
    p = sub.add_parser("random")
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--plies", type=int, default=150)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--step", type=int, default=1)
    p.add_argument("--capture-bias", type=float, default=0.5)
    p.add_argument("--sample", type=int, default=10)
    p.add_argument("--out", default="")
    p.add_argument("--games-out", default="")
    a = ap.parse_args()
    {"trace": cmd_trace, "random": cmd_random}[a.cmd](a)


if __name__ == "__main__":
    main()
