#!/usr/bin/env python3
"""Drives koma-usi through cshogi's USI client and checks every line the engine sends.

Usage: usi_client_check.py ENGINE [--timeout SECONDS]

ENGINE is the koma-usi binary (an absolute path: cshogi starts an engine in its own
folder). The engine runs with ModelFile=<uniform> (no network needed). The session:
usi (every option line against the USI option grammar, min <= default <= max), setoption
(Device <empty> included), isready, usinewgame, a short game of `go nodes` and `go btime 0
wtime 0 byoyomi` moves, go ponder with ponderhit and with stop, MultiPV 3, a mate in 1 and
a mated in 2 (score mate signs), go mate (a mate, a no mate), usinewgame dropping the tree,
gameover win|lose|draw ending a go ponder, quit.

Every line is checked against a strict grammar: each info token known, at most once, its
value well-formed (depth <= seldepth, hashfull in 0..1000, score cp N or mate N with N != 0,
multipv 1..MultiPV in order, pv moves legal in the searched position by cshogi's Board, a
mate line that long ending in mate), bestmove X [ponder Y] legal and the final pv's first
moves, checkmate lines legal mates with a check at every attacker's move. cshogi's own
parsers (InfoListener, MultiPVListener, Engine.go's bestmove) must read the same.
Exits 1 naming the first bad line, 2 on a hang or a usage error.
"""

import argparse
import os
import re
import sys
import threading

import cshogi
from cshogi.usi import Engine, InfoListener, MultiPVListener

MOVE = re.compile(r"^(?:[1-9][a-i][1-9][a-i]\+?|[PLNSGBR]\*[1-9][a-i])$")
INT = re.compile(r"^-?[0-9]+$")
# info tokens that take one whole number >= 0.
COUNTS = ("depth", "seldepth", "time", "nodes", "nps", "hashfull", "multipv", "currmovenumber")
MATE_IN_1 = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"
MATED = "4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1"
# A mate in 3 of data/fixtures/mates-shogi.tsv (cshogi and a brute force agree).
MATE_IN_3 = "1n1p1B1nb/s1s3sk1/lg2+Nppg1/L2g4L/1P1P2PR1/1+s2P4/2P1K4/PpG2P2P/1N5R1 b L6P 147"
NO_MATE = "4k4/9/9/9/9/9/9/9/4K4 b - 1"


class BadLine(Exception):
    pass


def fail(why):
    raise BadLine(why)


def is_info_string(line):
    """An `info string` line (free text, not checked), unless it reports an error."""
    if line.startswith("info string error"):
        fail("an error")
    return line.startswith("info string")


def board_of(sfen, moves):
    board = cshogi.Board() if sfen == "startpos" else cshogi.Board(sfen)
    for m in moves:
        play(board, m)
    return board


def play(board, usi):
    if not MOVE.match(usi):
        fail(f"'{usi}' is not a USI move")
    move = board.move_from_usi(usi)
    if not move or not board.is_legal(move):
        fail(f"{usi} is not legal in {board.sfen()}")
    board.push(move)


def parse_info(line):
    """The tokens of an info line as a dict (pv: list of moves, score: (kind, value))."""
    words = line.split(" ")
    if words[0] != "info" or len(words) < 2 or "" in words:
        fail("not 'info' followed by single-space separated tokens")
    info, i = {}, 1
    while i < len(words):
        key = words[i]
        if key in info:
            fail(f"'{key}' twice")
        if key in ("pv", "string"):
            rest = words[i + 1:]
            if not rest:
                fail(f"'{key}' with nothing after it")
            info[key] = rest
            break
        if key == "score":
            kind, value = (words[i + 1:i + 3] + [None, None])[:2]
            if kind == "cp" and value and INT.match(value):
                info[key] = ("cp", int(value))
            elif kind == "mate" and value in ("+", "-"):
                info[key] = ("mate", value)
            elif kind == "mate" and value and re.match(r"^[+-]?[0-9]+$", value) and int(value) != 0:
                info[key] = ("mate", int(value))
            else:
                fail(f"score {kind} {value}: expected 'score cp N' or 'score mate N' (N != 0)")
            i += 3
            if i < len(words) and words[i] in ("lowerbound", "upperbound"):
                i += 1
            continue
        if key in COUNTS:
            value = words[i + 1] if i + 1 < len(words) else ""
            if not re.match(r"^[0-9]+$", value):
                fail(f"{key} '{value}' is not a whole number >= 0")
            info[key] = int(value)
            i += 2
            continue
        if key == "currmove":
            info[key] = words[i + 1] if i + 1 < len(words) else fail("currmove without a move")
            i += 2
            continue
        fail(f"unknown info token '{key}'")
    if "seldepth" in info and ("depth" not in info or words.index("seldepth") != words.index("depth") + 2):
        fail("seldepth not right after depth (USI: seldepth needs depth)")
    if "depth" in info and info.get("seldepth", info["depth"]) < info["depth"]:
        fail("seldepth below depth")
    if info.get("hashfull", 0) > 1000:
        fail("hashfull above 1000 (permille)")
    if "pv" in info and "score" not in info:
        fail("a pv without a score")
    return info


def check_option(line):
    """`option name N type T ...` in the USI grammar; (name, type, default)."""
    m = re.match(r"^option name (\S+) type (check|spin|combo|button|string|filename)(.*)$", line)
    if not m:
        fail("not 'option name <id> type check|spin|combo|button|string|filename ...'")
    name, kind, rest = m.groups()
    if kind == "spin":
        m = re.match(r"^ default (-?[0-9]+) min (-?[0-9]+) max (-?[0-9]+)$", rest)
        if not m:
            fail("spin: expected 'default D min A max B'")
        d, lo, hi = map(int, m.groups())
        if not lo <= d <= hi:
            fail(f"spin default {d} outside {lo}..{hi}")
        return name, kind, d, (lo, hi)
    if kind == "check":
        if rest not in (" default true", " default false"):
            fail("check: expected 'default true|false'")
        return name, kind, rest.split()[-1], None
    if kind == "combo":
        m = re.match(r"^ default (\S+)((?: var \S+)+)$", rest)
        if not m:
            fail("combo: expected 'default D var V ...'")
        vars_ = m.group(2).split()[1::2]
        if m.group(1) not in vars_:
            fail(f"combo default {m.group(1)} is not one of its vars {vars_}")
        return name, kind, m.group(1), vars_
    if kind in ("string", "filename"):
        # An empty default is written <empty>.
        m = re.match(r"^ default (\S.*)$", rest)
        if not m or m.group(1) != m.group(1).strip():
            fail(f"{kind}: expected 'default <text>' (<empty> for none)")
        return name, kind, m.group(1), None
    if rest:
        fail("button: takes no default")
    return name, kind, None, None


class Session:
    """The engine with every line it sent, checked as it comes."""

    def __init__(self, engine_path):
        self.engine = Engine(engine_path, connect=False)
        self.lines = 0
        self.multipv = 1
        self.last_cmd = "(start)"

    def listener(self, on_line):
        """A cshogi listener: the first call is the command cshogi sends (skipped), every
        later one a line of the engine, checked by `on_line` in context."""
        first = [True]

        def listen(line):
            if first[0]:
                first[0] = False
                self.last_cmd = line
                return
            self.lines += 1
            try:
                on_line(line)
            except BadLine as e:
                raise BadLine(f"after '{self.last_cmd}': {line!r}: {e}") from None

        return listen

    # The engine's answers to usi and isready.

    def handshake(self):
        # connect() sends the first usi and reads to usiok; usi() asks again, with a listener.
        self.engine.connect()
        seen, ids = {}, []

        def on_line(line):
            if re.match(r"^id (name|author) \S", line):
                ids.append(line.split()[1])
                return
            if line == "usiok":
                return
            name, kind, default, extra = check_option(line)
            seen[name] = (kind, default, extra)

        self.engine.usi(listener=self.listener(on_line))
        if ids != ["name", "author"]:
            fail(f"usi: id lines {ids}, expected id name then id author")
        for want in ("USI_Hash", "USI_Ponder", "MultiPV", "ModelFile", "MateSearchPlies", "EnteringKingRule",
                     "Draw_Value_Black", "Draw_Value_White", "MaxMovesToDraw", "USI_OwnBook", "BookFile",
                     "BookMoves", "BookEvalDiff", "BookEvalBlackLimit", "BookEvalWhiteLimit", "BookDepthLimit",
                     "ConsiderBookMoveCount", "NetworkDelay", "NetworkDelay2", "MinimumThinkingTime", "SlowMover"):
            if want not in seen:
                fail(f"usi: no option {want}")
        # The rules and draw options as YaneuraOu and dlshogi announce them.
        if seen["EnteringKingRule"][:2] != ("combo", "CSARule27"):
            fail(f"EnteringKingRule: {seen['EnteringKingRule']}, expected a combo defaulting to CSARule27")
        for name, default in (("Draw_Value_Black", 500), ("Draw_Value_White", 500), ("MaxMovesToDraw", 0)):
            if seen[name][:2] != ("spin", default):
                fail(f"{name}: {seen[name]}, expected a spin defaulting to {default}")
        # The book options as YaneuraOu announces them (USI_OwnBook: ShogiGUI's name).
        for name, kind, default in (("USI_OwnBook", "check", "true"), ("BookMoves", "spin", 16),
                                    ("BookEvalDiff", "spin", 30), ("ConsiderBookMoveCount", "check", "false")):
            if seen[name][:2] != (kind, default):
                fail(f"{name}: {seen[name]}, expected a {kind} defaulting to {default}")
        # The time options under YaneuraOu's names (koma's defaults: README, options table).
        for name, default in (("NetworkDelay", 0), ("NetworkDelay2", 0), ("MinimumThinkingTime", 2000),
                              ("SlowMover", 100)):
            if seen[name][:2] != ("spin", default):
                fail(f"{name}: {seen[name]}, expected a spin defaulting to {default}")
        if seen["BookFile"][0] != "filename":
            fail("BookFile is not announced as a filename")
        if seen["ModelFile"][0] != "filename":
            fail("ModelFile is not announced as a filename")
        self.options = seen
        print(f"usi_client_check: {len(seen)} options well-formed")

    def isready(self, stray_bestmoves=0):
        """isready .. readyok: only info string lines (no error), and `stray_bestmoves`
        bestmove lines of a search that a gameover ended."""
        strays = []

        def on_line(line):
            if line.startswith("bestmove "):
                strays.append(line)
                return
            if line == "readyok":
                return
            if not line.startswith("info string ") or line.startswith("info string error"):
                fail("expected info string lines (no errors) and readyok")

        self.engine.isready(listener=self.listener(on_line))
        if len(strays) != stray_bestmoves:
            fail(f"isready: {len(strays)} bestmove lines before readyok, expected {stray_bestmoves}: {strays}")

    def setoption(self, name, value):
        kind, _, extra = self.options[name]
        if kind == "spin" and not extra[0] <= int(value) <= extra[1]:
            fail(f"test error: {name} {value} outside its range")
        self.engine.setoption(name, value)
        if name == "MultiPV":
            self.multipv = int(value)

    # Searches.

    def go(self, sfen, moves, **go_args):
        """position + go: every line checked; returns (bestmove, ponder, final info)."""
        self.engine.position(moves=moves, sfen=sfen if sfen == "startpos" else "sfen " + sfen)
        infos = []

        def on_line(line):
            if line.startswith("bestmove") or is_info_string(line):
                return
            info = parse_info(line)
            self.check_search_info(info, infos, sfen, moves)
            infos.append(info)

        ours = self.listener(on_line)
        multipv = MultiPVListener(listner=ours)
        cshogi_info = InfoListener(listner=multipv)
        bestmove, ponder = self.engine.go(listener=cshogi_info.listen(), **go_args)
        line = cshogi_info._last_line
        try:
            self.check_bestmove(line, bestmove, ponder, infos, sfen, moves)
            if infos and "pv" in infos[-1]:
                self.check_cshogi_read(cshogi_info, multipv, bestmove, infos)
        except BadLine as e:
            raise BadLine(f"after '{self.last_cmd}': {line!r}: {e}") from None
        return bestmove, ponder, (infos[-1] if infos else None)

    def check_search_info(self, info, earlier, sfen, moves):
        for key in ("depth", "seldepth", "time", "nodes", "nps", "hashfull"):
            if key not in info:
                fail(f"no {key}")
        if earlier and (info["time"] < earlier[-1]["time"]):
            fail("time went back")
        if self.multipv > 1 and "score" in info:
            k = info.get("multipv") or fail("MultiPV > 1 and no multipv")
            if not 1 <= k <= self.multipv:
                fail(f"multipv {k} outside 1..{self.multipv}")
            prev = earlier[-1] if earlier else None
            same_report = prev is not None and prev["time"] == info["time"] and prev["nodes"] == info["nodes"]
            want = prev["multipv"] + 1 if same_report and k != 1 else 1
            if k != want:
                fail(f"multipv {k} where {want} was due")
        elif "multipv" in info and info["multipv"] != 1:
            fail("multipv above 1 with MultiPV 1")
        if "pv" in info:
            board = board_of(sfen, moves)
            for m in info["pv"]:
                play(board, m)
            kind, value = info["score"]
            if kind == "mate" and isinstance(value, int) and abs(value) == len(info["pv"]):
                if not board.is_game_over():
                    fail(f"score mate {value} with a pv of {len(info['pv'])} plies that does not end in mate")
                loser_is_root_side = len(info["pv"]) % 2 == 0
                if (value < 0) != loser_is_root_side:
                    fail(f"score mate {value}: the sign does not say who is mated")

    def check_bestmove(self, line, bestmove, ponder, infos, sfen, moves):
        m = re.match(r"^bestmove (\S+)(?: ponder (\S+))?$", line)
        if not m:
            fail(f"{line!r} is not 'bestmove <move>|resign|win [ponder <move>]'")
        if (m.group(1), m.group(2)) != (bestmove, ponder):
            fail(f"cshogi read {line!r} as {bestmove} ponder {ponder}")
        if bestmove in ("resign", "win"):
            if ponder:
                fail(f"bestmove {bestmove} with a ponder move")
            return
        board = board_of(sfen, moves)
        play(board, bestmove)
        if ponder:
            play(board, ponder)
        final = [i for i in infos if "pv" in i and i.get("multipv", 1) == 1]
        if final:
            pv = final[-1]["pv"]
            if pv[0] != bestmove or (ponder and (len(pv) < 2 or pv[1] != ponder)):
                fail(f"bestmove {bestmove} ponder {ponder} is not the final pv {' '.join(pv[:2])}")

    def check_cshogi_read(self, cshogi_info, multipv, bestmove, infos):
        """cshogi's InfoListener and MultiPVListener read the engine's lines."""
        if cshogi_info.bestmove != bestmove:
            fail(f"InfoListener read bestmove {cshogi_info.bestmove}")
        if bestmove in ("resign", "win"):
            return
        parsed = cshogi_info.info
        if parsed is None or cshogi_info.pv[0] != bestmove or not isinstance(cshogi_info.score, int):
            fail(f"InfoListener did not read the final info (info {parsed}, pv {cshogi_info.pv})")
        ours = [i for i in infos if "pv" in i and i["pv"][0] == bestmove][-1]
        for key in ("depth", "seldepth", "nodes", "nps", "hashfull", "time"):
            if parsed.get(key) != ours[key]:
                fail(f"InfoListener read {key} {parsed.get(key)}, the engine wrote {ours[key]}")
        if self.multipv > 1:
            got = [d.get("multipv") for d in multipv.info]
            if got != list(range(1, len(got) + 1)) or not got:
                fail(f"MultiPVListener read multipv {got}")

    def go_mate(self, sfen, time_ms):
        """position + go mate: (the checkmate answer, its lines)."""
        self.engine.position(sfen="sfen " + sfen)

        def on_line(line):
            if line.startswith("checkmate") or is_info_string(line):
                return
            info = parse_info(line)
            if "pv" in info or "score" in info:
                fail("go mate's info carries no pv or score")

        answer = self.engine.go_mate(byoyomi=time_ms, listener=self.listener(on_line))
        try:
            return self.check_checkmate(sfen, answer)
        except BadLine as e:
            raise BadLine(f"after '{self.last_cmd}': 'checkmate {answer}': {e}") from None

    def check_checkmate(self, sfen, answer):
        if answer in ("nomate", "timeout", "notimplemented"):
            return answer
        board = board_of(sfen, [])
        attacker = board.turn
        for m in answer.split(" "):
            mover = board.turn
            play(board, m)
            if mover == attacker and not board.is_check():
                fail(f"checkmate {answer}: {m} gives no check")
        if not (board.turn != attacker and board.is_game_over()):
            fail(f"checkmate {answer} does not mate")
        return answer


def play_a_game(s):
    """Six plies: go nodes and go byoyomi, each move legal, played on cshogi's Board."""
    moves = []
    for ply in range(6):
        go = {"nodes": 300} if ply % 2 == 0 else {"btime": 0, "wtime": 0, "byoyomi": 400}
        bestmove, _, _ = s.go("startpos", moves, **go)
        if bestmove in ("resign", "win"):
            fail(f"ply {ply}: {bestmove} in an opening")
        moves.append(bestmove)
    return moves


def ponder(s, moves, then):
    """go ponder, and `then` (ponderhit, stop or a gameover) from another thread after a
    moment; the bestmove it ends with."""
    timer = threading.Timer(0.3, then)
    timer.start()
    bestmove, _, _ = s.go("startpos", moves, ponder=True, btime=0, wtime=0, byoyomi=500)
    timer.join()
    return bestmove


def session(s):
    s.handshake()
    s.setoption("ModelFile", "<uniform>")
    s.setoption("Device", "<empty>")
    s.setoption("Threads", 1)
    s.setoption("InfoInterval", 100)
    s.setoption("USI_Ponder", "true")
    s.setoption("USI_Hash", 64)
    s.isready()
    s.engine.usinewgame()
    moves = play_a_game(s)
    # Ponder hit, ponder miss.
    ponder(s, moves, s.engine.ponderhit)
    ponder(s, moves, s.engine.stop)
    # MultiPV: numbered lines, 1..3 in each report.
    s.setoption("MultiPV", 3)
    s.isready()
    s.go("startpos", [], nodes=1500)
    s.setoption("MultiPV", 1)
    s.isready()
    # Score signs: a mate in 1, a mated in 2 (after the first move of a mate in 3), mated.
    bestmove, _, info = s.go(MATE_IN_1, [], nodes=300)
    if bestmove != "G*5b" or info["score"] != ("mate", 1):
        fail(f"mate in 1: bestmove {bestmove}, score {info['score']}")
    mate = s.go_mate(MATE_IN_3, 10000).split(" ")
    if len(mate) != 3:
        fail(f"go mate: a mate in 3 answered {' '.join(mate)}")
    _, _, info = s.go(MATE_IN_3, mate[:1], nodes=3000)
    if info["score"] != ("mate", -2):
        fail(f"mated in 2: score {info['score']}")
    bestmove, _, _ = s.go(MATED, [], nodes=100)
    if bestmove != "resign":
        fail(f"a mated position answered bestmove {bestmove}")
    if s.go_mate(NO_MATE, 2000) != "nomate":
        fail("go mate: bare kings not nomate")
    # usinewgame drops the tree: one node searches a fresh root.
    s.go("startpos", [], nodes=2000)
    _, _, kept = s.go("startpos", [], nodes=1)
    s.engine.usinewgame()
    _, _, fresh = s.go("startpos", [], nodes=1)
    if not (kept["depth"] > 1 and fresh["depth"] == 1):
        fail(f"usinewgame: depth {kept['depth']} after the tree was kept, {fresh['depth']} after usinewgame")
    # gameover ends a go ponder with its bestmove (cshogi's Engine.go reads it), and the
    # next game starts; as ShogiHome does it: stop, then gameover (nothing more comes).
    for result in ("win", "lose", "draw"):
        ponder(s, moves, lambda: s.engine.gameover(result))
        s.isready()
        s.engine.usinewgame()
    ponder(s, moves, s.engine.stop)
    s.engine.gameover("lose")
    s.isready()
    proc = s.engine.proc
    s.engine.quit()
    rest = proc.stdout.read().decode().split("\n")
    if [line for line in rest if line.strip()]:
        fail(f"lines after quit: {rest}")
    if proc.returncode != 0:
        fail(f"quit: exit status {proc.returncode}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("engine")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds for the whole session")
    args = ap.parse_args()
    if not os.path.isabs(args.engine) or not os.access(args.engine, os.X_OK):
        print(f"usi_client_check: {args.engine}: not an executable given by an absolute path", file=sys.stderr)
        return 2
    s = Session(args.engine)

    def hang():
        print(f"usi_client_check: no answer within {args.timeout} s; last command '{s.last_cmd}'", file=sys.stderr)
        if s.engine.proc:
            s.engine.proc.kill()
        os._exit(2)

    watchdog = threading.Timer(args.timeout, hang)
    watchdog.daemon = True
    watchdog.start()
    try:
        session(s)
    except BadLine as e:
        print(f"usi_client_check: FAILED: {e}", file=sys.stderr)
        if s.engine.proc:
            s.engine.proc.kill()
        return 1
    watchdog.cancel()
    print(f"usi_client_check: ok, {s.lines} engine lines checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
