#!/usr/bin/env python3
"""Make the balanced opening sets of data/openings/ (see data/openings/README.md).

Procedure, per opening:
  1. From the variant's start position play N random plies, N uniform in
     [--min-plies, --max-plies] (default 4..8). Each ply is a uniformly random legal
     move (legal moves from `koma moves`), redrawn (up to 30 times) while a
     reference engine's quick search (--pick-depth) scores the position after it worse
     than -PICK cp for the mover: "random but sane".
  2. Keep the line if the reference engine's deeper search (--depth) of the final
     position is within +-BAND cp (default 150), the game is not over, and the final
     line is new (not the same moves for each side in another order).
Reference engines: standard shogi: Fairy-Stockfish over USI (`go depth`); sho shogi:
Sjaak II over XBoard (`sd`, `post`); dai shogi: none (quiet random plies, no captures).
Output: one opening per line as `startpos moves ...` (what a USI `position` command
takes; engines that cannot load a SFEN get the moves), preceded by a comment header.

  scripts/ref/make_openings.py --variant shogi --count 100 --seed 1 > data/openings/shogi.txt
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KOMA = os.path.join(ROOT, "target", "release", "koma")


def find(name):
    for d in ("/usr/games", "/usr/bin", "/usr/local/bin"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    sys.exit(f"{name} not found: run scripts/install-engines.sh")


class Engine:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def line(self):
        l = self.p.stdout.readline()
        if not l:
            raise RuntimeError("engine exited")
        return l.strip()

    def until(self, pred):
        while True:
            l = self.line()
            if pred(l):
                return l


class Usi(Engine):
    """Fairy-Stockfish: score in cp (or mate) from the side to move's view."""

    def __init__(self, argv):
        super().__init__(argv)
        self.send("usi")
        self.until(lambda l: l == "usiok")
        self.send("setoption name Threads value 1")
        self.send("isready")
        self.until(lambda l: l == "readyok")

    def score(self, moves, depth):
        self.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        self.send(f"go depth {depth}")
        score = 0
        while True:
            l = self.line()
            m = re.search(r"score (cp|mate) (-?\d+)", l)
            if m:
                score = int(m.group(2)) if m.group(1) == "cp" else (100000 if int(m.group(2)) > 0 else -100000)
            if l.startswith("bestmove"):
                return score


class Xboard(Engine):
    """Sjaak II / HaChu: score from the `post` lines (`depth score time nodes pv`), side to move's view."""

    def __init__(self, argv, variant):
        super().__init__(argv)
        self.variant = variant
        self.send("xboard")
        self.send("protover 2")
        self.usermove = False
        while True:
            l = self.line()
            if l.startswith("feature") and "usermove=1" in l:
                self.usermove = True
            if "done=1" in l:
                break
        self.n = 0

    def sync(self):
        self.n += 1
        self.send(f"ping {self.n}")
        self.until(lambda l: l == f"pong {self.n}")

    def score(self, moves_xb, depth):
        self.send("new")
        self.send(f"variant {self.variant}")
        self.send("force")
        self.send("post")
        for m in moves_xb:
            self.send(f"usermove {m}" if self.usermove else m)
        self.send(f"sd {depth}")
        self.send("st 30")
        self.send("go")
        score = 0
        while True:
            l = self.line()
            m = re.match(r"^\s*(\d+)\s+(-?\d+)\s+\d+\s+\d+", l)
            if m:
                score = int(m.group(2))
            if l.startswith("move ") and not l.endswith(","):
                break
            if l == "resign" or re.match(r"^(1-0|0-1|1/2-1/2)", l):
                break
        self.send("force")
        self.sync()
        return score


def koma(args, lines=None):
    out = subprocess.run([KOMA] + args, input=lines, capture_output=True, text=True, check=True)
    return out.stdout


def legal_moves(variant, moves, notation="usi"):
    args = ["moves", "--variant", variant]
    if notation != "usi":
        args += ["--notation", notation]
    line = "startpos" + (" moves " + " ".join(moves) if moves else "")
    out = koma(args, line + "\n")
    return out.split("\t", 1)[1].split() if "\t" in out else []


def final_key(variant, moves):
    out = koma(["outcome", "--variant", variant], "startpos\t" + " ".join(moves) + "\n").split()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="shogi", choices=["shogi", "sho", "dai"])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-plies", type=int, default=4)
    ap.add_argument("--max-plies", type=int, default=8)
    ap.add_argument("--depth", type=int, default=None, help="final evaluation depth")
    ap.add_argument("--pick-depth", type=int, default=None, help="per-ply sanity depth")
    ap.add_argument("--band", type=int, default=150)
    ap.add_argument("--pick", type=int, default=300)
    a = ap.parse_args()
    if not os.path.exists(KOMA):
        subprocess.run(["cargo", "build", "--release", "-p", "koma", "-p", "koma-net"], cwd=ROOT, check=True)
    rng = random.Random(a.seed)
    v = a.variant
    if v == "shogi":
        eng = Usi([find("fairy-stockfish")])
        name, depth, pick = "Fairy-Stockfish (USI)", a.depth or 10, a.pick_depth or 4
        score = lambda mv, d: eng.score(mv, d)
    elif v == "dai":
        # Dai openings are random quiet plies (no capture, so material stays level),
        # unscored (HaChu scoring: to do; it needs `memory N` before dai moves).
        name, depth, pick = "none (quiet random plies: no captures)", 0, 1
        # A capture scores as lost for the mover (the score is the opponent's view).
        score = lambda mv, d: 100000 if d > 0 and is_capture(v, mv) else 0
    else:
        exe, ename = find("sjaakii"), "Sjaak II"
        eng = Xboard([exe], v)
        name, depth, pick = f"{ename} (XBoard)", a.depth or 6, a.pick_depth or 3

        def score(mv, d):
            return eng.score(usi_to_xb(v, mv), d)
    seen = set()
    kept = []
    tries = 0
    t0 = time.time()
    while len(kept) < a.count and tries < a.count * 20:
        tries += 1
        n = rng.randint(a.min_plies, a.max_plies)
        moves = []
        ok = True
        for _ in range(n):
            legal = legal_moves(v, moves)
            if not legal:
                ok = False
                break
            for _attempt in range(30):
                mv = rng.choice(legal)
                # The score after the move is the opponent's view: the mover's is minus it.
                if -score(moves + [mv], pick) >= -a.pick:
                    break
            moves.append(mv)
        if not ok:
            continue
        end = final_key(v, moves)
        if end[0] != "none":
            continue
        pos_key = position_key(moves)
        if pos_key in seen:
            continue
        s = score(moves, depth)
        if abs(s) > a.band:
            continue
        seen.add(pos_key)
        kept.append((moves, s))
        print(f"{len(kept)}/{a.count}: {' '.join(moves)} ({s:+d})", file=sys.stderr)
    print(f"# koma opening set: {v}, {len(kept)} openings, made by scripts/ref/make_openings.py")
    print(f"# --variant {v} --count {a.count} --seed {a.seed} --min-plies {a.min_plies} --max-plies {a.max_plies}"
          f" --depth {depth} --pick-depth {pick} --band {a.band} --pick {a.pick}")
    print(f"# reference engine: {name}; the final scores (cp, side to move's view) are in the last line;")
    print(f"# {tries} lines tried in {time.time() - t0:.0f} s.")
    for moves, s in kept:
        print("startpos moves " + " ".join(moves))
    print("# scores: " + " ".join(f"{s:+d}" for _, s in kept))


DAI_START = ("ln[st]icsgkgsci[st]nl/[rc]1[cs]1[fl]1tet1[fl]1[cs]1[rc]/1o1[ab]1[ew]f[ln][kr][ew]1[ab]1o1/"
             "r[fd][sm][vm]bhd[fk]dhb[vm][sm][fd]r/ppppppppppppppp/4[gb]5[gb]4/15/15/15/4[GB]5[GB]4/"
             "PPPPPPPPPPPPPPP/R[FD][SM][VM]BHD[FK]DHB[VM][SM][FD]R/1O1[AB]1[EW][KR][LN]F[EW]1[AB]1O1/"
             "[RC]1[CS]1[FL]1TET1[FL]1[CS]1[RC]/LN[ST]ICSGKGSCI[ST]NL")  # rules/src/variant.rs


def occupied_squares(board, size):
    """USI squares ('15a') holding a piece in a SFEN board field."""
    occ = set()
    for r, row in enumerate(board.split("/")):
        f = size
        for tok in re.findall(r"\d+|\[[^\]]+\]|\+?[A-Za-z]", row):
            if tok.isdigit():
                f -= int(tok)
            else:
                occ.add(f"{f}{chr(ord('a') + r)}")
                f -= 1
    return occ


def is_capture(variant, moves):
    """Whether the last move lands on (or, for a lion move, passes over) an occupied square."""
    occ = occupied_squares(DAI_START, 15)
    for i, mv in enumerate(moves):
        sqs = re.findall(r"\d+[a-o]", mv)
        if i == len(moves) - 1:
            return any(sq in occ for sq in sqs[1:] if sq != sqs[0])
        occ.discard(sqs[0])
        for sq in sqs[1:]:
            occ.discard(sq)
        occ.add(sqs[-1])
    return False


def position_key(moves):
    """Lines with the same moves for each side (in any order) reach the same position
    when nothing is captured, which is the usual case in 4..8 plies: count them once."""
    return (len(moves) % 2, tuple(sorted(moves[0::2])), tuple(sorted(moves[1::2])))


def usi_to_xb(variant, moves):
    """USI -> XBoard square text: files 1..N from the right, ranks a.. from the top in USI;
    XBoard files a.. from sente's left, ranks 1.. from sente's side (see rules/src/xboard.rs).
    Drops do not occur in sho/dai; lion double moves are written `from mid to` in USI
    (dai) and `<from><mid>,<mid><to>` in XBoard."""
    size = 9 if variant == "sho" else 15

    def sq(t):
        m = re.match(r"(\d+)([a-o])", t)
        f, r = int(m.group(1)), ord(m.group(2)) - ord("a") + 1
        return chr(ord("a") + size - f) + str(size + 1 - r), t[len(m.group(0)):]

    out = []
    for mv in moves:
        a, rest = sq(mv)
        b, rest = sq(rest)
        if rest and rest[0].isdigit():
            c, rest = sq(rest)
            out.append(f"{a}{b},{b}{c}")
        else:
            out.append(a + b + ("+" if rest == "+" else ""))
    return out


if __name__ == "__main__":
    main()
