#!/usr/bin/env python3
"""Drive HaChu (Debian package `hachu`, XBoard protocol) as a dai/sho shogi reference.

Modes (subcommands):

  moves    print HaChu's legal-move list for positions given as
           `startpos moves <m1> <m2> ...` lines (stdin or --input), one output
           line per input line, in the format of shared/testdata/moves-dai.tsv:
           `<position>\\t<sorted moves>`.
  check    compare with a moves-*.tsv file (default the shared moves-dai.tsv):
           recompute each line and report differences; exit 1 on any.
  reject   for each input line (`startpos moves ...`, or a bare move list),
           play the moves and report the first one HaChu rejects, as one JSON
           object per line: {"line": n, "ok": bool, "ply": i, "move": m,
           "reason": "Illegal move {...}"}; ply is 0-based. Exit 1 if any
           line has a rejected move.
  selfplay play games (HaChu against itself at a tiny depth, with some random
           moves from its list for variety) and write sampled positions with
           their move lists: this makes data/fixtures/moves-dai-extra.tsv.

How the move list is obtained: after `force` and the moves (`usermove`), the
driver sends the off-board move `usermove p16p16`. HaChu rejects it and, as
debug output, prints its root move list as `# <n>. <hex move> <hex> <text>`
lines, followed by the moves that are banned because they repeat an earlier
position (numbered from 0 again; those are not legal and are dropped).
Entries whose move word is 00000000 are empty slots (printed as @@@@) and are
skipped. Then, as in moves-dai.tsv, for each listed promotion `X+` whose bare
form `X` is not listed, the driver plays `usermove X`, and keeps `X` when
HaChu accepts it AND executes it as a non-promotion (HaChu executes some bare
inputs as the promotion: those are aliases, not moves). HaChu's debug line
`# makemove <text>` shows what it executed; the move is then taken back with
`undo`.

Variant names: HaChu's `feature variants=` lists `dai` and `sho` (and `chu`,
...). `variant` must come after `new` (`new` resets to chu). Debian's HaChu
(0.21-29-gdf26f4a-3) fails on `variant sho` ("tellusererror Unknown piece
'LN' in setup" and exits), so only dai works with this build.

Examples:
  scripts/ref/hachu.py check
  scripts/ref/hachu.py check --file shared/testdata/moves-sho-xboard.tsv --variant sho
  echo 'startpos moves n5n6 n15m13' | scripts/ref/hachu.py moves
  scripts/ref/hachu.py reject --input games.txt
  scripts/ref/hachu.py selfplay --games 12 --out data/fixtures/moves-dai-extra.tsv
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

HACHU = os.environ.get("HACHU", "/usr/games/hachu")
LIST_RE = re.compile(r"^# *(-?\d+)\. ([0-9a-f]{8}) [0-9a-f]{8} (\S+)$")


# Dai shogi start position (RULES.md), sente's ranks 15..10 = HaChu ranks 1..6, files a..o.
DAI_SETUP = [
    "L N St Ir Cu S G K G S Cu Ir St N L",
    "RC . CS . FL . BT DE BT . FL . CS . RC",
    ". FO . AB . EW Ki Ln Ph EW . AB . FO .",
    "R FD SM VM B DH DK FK DK DH B VM SM FD R",
    "P P P P P P P P P P P P P P P",
    ". . . . GB . . . . . GB . . . .",
]


def sq_parse(text):
    """'h10' -> (7, 10); returns (square, rest of text)."""
    m = re.match(r"([a-o])(\d+)", text)
    return (ord(m.group(1)) - 97, int(m.group(2))), text[m.end():]


class DaiTracker:
    """Follows a dai game in HaChu notation just far enough to see when it is over:
    a side without royals (King, Crown Prince = promoted Drunk Elephant) or with
    nothing but royals (bare king) has lost. Not a rules engine: it trusts the moves."""

    def __init__(self):
        self.board = {}
        for i, row in enumerate(DAI_SETUP):
            for f, kind in enumerate(row.split()):
                if kind != ".":
                    self.board[(f, i + 1)] = ("b", kind, False)
                    self.board[(14 - f, 15 - i)] = ("w", kind, False)
        self.stm = "b"

    def push(self, mv):
        if mv != "@@@@":
            promote = mv.endswith("+")
            body = mv.rstrip("+")
            legs = body.split(",")
            a, rest = sq_parse(legs[0])
            b, _ = sq_parse(rest)
            piece = self.board.pop(a)
            if len(legs) == 2:
                m, rest = sq_parse(legs[1])
                t, _ = sq_parse(rest)
                if b in self.board and self.board[b][0] != self.stm:
                    del self.board[b]
                b = t
            color, kind, prom = piece
            self.board[b] = (color, kind, prom or promote)
        self.stm = "w" if self.stm == "b" else "b"

    def over(self):
        for side in "bw":
            mine = [(k, p) for (c, k, p) in self.board.values() if c == side]
            royals = [1 for k, p in mine if k == "K" or (k == "DE" and p)]
            if not royals or len(royals) == len(mine):
                return True
        return False


class HaChu:
    def __init__(self, variant="dai", exe=HACHU, memory=64):
        self.p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.variant = variant
        self.n = 0
        self.send("xboard")
        self.send("protover 2")
        feats = self.sync()
        vline = [l for l in feats if l.startswith("feature variants=")]
        if not vline or variant not in vline[0].split('"')[1].split(","):
            raise RuntimeError(f"HaChu does not offer variant {variant!r}: {vline}")
        self.send(f"memory {memory}")
        self.new_game()

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def sync(self):
        """Send ping and return all output lines before the matching pong."""
        self.n += 1
        self.send(f"ping {self.n}")
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("HaChu exited; last output: " + " | ".join(out[-3:]))
            line = line.rstrip("\n")
            if line == f"pong {self.n}":
                return out
            out.append(line)

    def new_game(self):
        self.send("new")
        self.send(f"variant {self.variant}")
        self.send("force")
        self.moves = []
        self.sync()

    def close(self):
        try:
            self.send("quit")
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()

    @staticmethod
    def _verdict(lines):
        """(accepted, reason, pboard lines) from the output of one usermove."""
        bad = [l for l in lines if l.startswith("Illegal move")]
        board = [l for l in lines if l.startswith("#") and not l.startswith("# ") and len(l) > 10]
        return (not bad, bad[0] if bad else None, board)

    def usermove(self, mv):
        """Play mv; return (accepted, reason). Rejected moves leave the position unchanged."""
        self.send(f"usermove {mv}")
        ok, reason, _ = self._verdict(self.sync())
        if ok:
            self.moves.append(mv)
        return ok, reason

    def try_move(self, mv):
        """Play mv and take it back; return (accepted, text of the move HaChu made).

        HaChu logs every move it makes as `# makemove <text> ...`; the text
        ends in `+` when it executed the move as a promotion."""
        self.send(f"usermove {mv}")
        lines = self.sync()
        ok, _, _ = self._verdict(lines)
        made = None
        if ok:
            mm = [l.split()[2] for l in lines if l.startswith("# makemove ")]
            made = mm[-1] if mm else None
            self.send("undo")
            self.sync()
        return ok, made

    def play(self, moves):
        """Play a list of moves from the start; return (index, move, reason) of the first rejected one, or None."""
        self.new_game()
        for i, mv in enumerate(moves):
            ok, reason = self.usermove(mv)
            if not ok:
                return i, mv, reason
        return None

    def raw_list(self):
        """HaChu's root move list (text), from the debug output of an illegal move."""
        self.send("usermove p16p16")
        lines = self.sync()
        moves, last = [], None
        for l in lines:
            m = LIST_RE.match(l)
            if not m:
                continue
            idx = int(m.group(1))
            if last is not None and idx <= last:
                break  # numbering restarts: the repetition-banned moves follow
            last = idx
            if m.group(2) == "00000000":
                continue
            moves.append(m.group(3))
        return moves

    def legal_moves(self):
        """The move list as moves-dai.tsv has it: raw list plus real bare deferrals, sorted, unique."""
        raw = self.raw_list()
        have = set(raw)
        extra = []
        for mv in raw:
            if not mv.endswith("+") or mv[:-1] in have:
                continue
            ok_bare, made = self.try_move(mv[:-1])
            if not ok_bare:
                continue
            if made is None:
                raise RuntimeError(f"no makemove line for {mv[:-1]} after {self.moves}")
            if not made.endswith("+"):
                extra.append(mv[:-1])
        return sorted(have | set(extra))


def parse_position(line):
    """`startpos moves a b c` / `startpos` / `a b c` -> list of moves."""
    toks = line.split()
    if toks[:1] == ["startpos"]:
        toks = toks[2:] if toks[1:2] == ["moves"] else toks[1:]
    return toks


def fmt_position(moves):
    return "startpos" + (" moves " + " ".join(moves) if moves else "")


def read_lines(path):
    f = open(path) if path and path != "-" else sys.stdin
    return [l.rstrip("\n") for l in f if l.strip()]


def cmd_moves(a):
    h = HaChu(a.variant)
    for line in read_lines(a.input):
        moves = parse_position(line.split("\t")[0])
        bad = h.play(moves)
        if bad:
            print(f"# rejected ply {bad[0]} {bad[1]}: {bad[2]}", file=sys.stderr)
            continue
        print(f"{fmt_position(moves)}\t{' '.join(h.legal_moves())}")
    h.close()


def cmd_check(a):
    h = HaChu(a.variant)
    bad = 0
    lines = read_lines(a.file)
    if a.limit:
        lines = lines[: a.limit]
    for n, line in enumerate(lines, 1):
        pos, want = line.split("\t")
        moves = parse_position(pos)
        rej = h.play(moves)
        if rej:
            print(f"line {n}: HaChu rejects ply {rej[0]} {rej[1]}: {rej[2]}")
            bad += 1
            continue
        got = h.legal_moves()
        w = want.split()
        if got != w:
            bad += 1
            print(f"line {n}: differs: missing {sorted(set(w) - set(got))} extra {sorted(set(got) - set(w))}")
    h.close()
    print(f"{len(lines) - bad} same, {bad} different")
    sys.exit(1 if bad else 0)


def cmd_reject(a):
    h = HaChu(a.variant)
    any_bad = False
    for n, line in enumerate(read_lines(a.input), 1):
        moves = parse_position(line.split("\t")[0])
        rej = h.play(moves)
        if rej:
            any_bad = True
            print(json.dumps({"line": n, "ok": False, "ply": rej[0], "move": rej[1], "reason": rej[2]}))
        else:
            print(json.dumps({"line": n, "ok": True, "plies": len(moves)}))
    h.close()
    sys.exit(1 if any_bad else 0)


def engine_move(h, depth):
    """Ask HaChu for a move for the side to move; returns move text or None if it ends the game."""
    h.send(f"sd {depth}")
    h.send("st 1")
    h.send("go")
    legs = []
    while True:
        line = h.p.stdout.readline()
        if not line:
            raise RuntimeError("HaChu exited")
        line = line.strip()
        if line.startswith("move "):
            legs.append(line[5:])
            if not line.endswith(","):
                break
        elif re.match(r"^(1-0|0-1|1/2-1/2)", line) or line == "resign":
            h.result = line
            h.send("force")
            h.sync()
            return None
    h.send("force")
    h.sync()
    mv = "".join(legs)
    h.moves.append(mv)
    return mv


def cmd_selfplay(a):
    rng = random.Random(a.seed)
    h = HaChu(a.variant)
    out = []
    seen = set()
    for g in range(a.games):
        h.new_game()
        h.result = None
        # sample plies for this game: spread over the game
        sample_at = set(rng.sample(range(1, a.max_plies), a.per_game))
        tr = DaiTracker() if a.variant == "dai" else None
        for ply in range(a.max_plies):
            if tr and tr.over():
                h.result = "royal captured or bare king"
                break
            if ply in sample_at or (g == 0 and ply == 0 and a.include_start):
                key = tuple(h.moves)
                if key not in seen:
                    seen.add(key)
                    lm = h.legal_moves()
                    out.append(f"{fmt_position(h.moves)}\t{' '.join(lm)}")
            if rng.random() < a.random_prob:
                raw = h.raw_list()
                if not raw:
                    break
                mv = rng.choice(raw)
                ok, reason = h.usermove(mv)
                if not ok:
                    raise RuntimeError(f"HaChu rejects its own listed move {mv}: {reason}")
            else:
                mv = engine_move(h, rng.choice([1, 1, 2]))
                if mv is None:
                    break
            if tr:
                tr.push(mv)
        # every recorded move must replay from scratch
        print(f"game {g + 1}: {len(h.moves)} plies, end {h.result!r}, {len(out)} positions so far", file=sys.stderr)
    h.close()
    # re-check every line with a fresh process: replay and recompute
    h = HaChu(a.variant)
    with open(a.out, "w") as f:
        for line in out:
            pos, lst = line.split("\t")
            rej = h.play(parse_position(pos))
            if rej:
                raise RuntimeError(f"replay rejected: {rej}")
            if " ".join(h.legal_moves()) != lst:
                raise RuntimeError(f"move list not reproducible for {pos}")
            f.write(line + "\n")
    h.close()
    print(f"wrote {a.out}: {len(out)} positions", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--variant", default="dai", help="HaChu variant name (dai, sho, chu, ...)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("moves")
    p.add_argument("--input", default="-")
    p = sub.add_parser("check")
    p.add_argument("--file", default=os.path.join(os.path.dirname(__file__), "../../../shared/testdata/moves-dai.tsv"))
    p.add_argument("--limit", type=int, default=0)
    p = sub.add_parser("reject")
    p.add_argument("--input", default="-")
    p = sub.add_parser("selfplay")
    p.add_argument("--games", type=int, default=12)
    p.add_argument("--per-game", type=int, default=9)
    p.add_argument("--max-plies", type=int, default=160)
    p.add_argument("--random-prob", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--include-start", action="store_true")
    p.add_argument("--out", default="data/fixtures/moves-dai-extra.tsv")
    a = ap.parse_args()
    {"moves": cmd_moves, "check": cmd_check, "reject": cmd_reject, "selfplay": cmd_selfplay}[a.cmd](a)


if __name__ == "__main__":
    main()
