#!/usr/bin/env python3
"""Mates in play: how many mate problems of data/tsume/reference.tsv a timed search of
koma-usi (a normal `go`, not `go mate`) answers with a mating first move.

For every `mate` row the engine gets `position sfen ...` and `go byoyomi <ms>` (or
`go movetime <ms>`) and its `bestmove` counts as mating when it is

- the first move of the reference's mating line (cshogi's PV) or of `go mate`'s line
  on the same position (the checker engine, `--check-ms` each), or
- a move after which the defender is mated, or after which every defender's reply
  leaves a mate that `go mate` proves (`--check-ms` each reply).

The script also counts the answers that reported `score mate +N` in their last `info`.
The checker is `--checker` (default: the engine under test; `go mate` is the same
solver before and after the change being measured). Needs the repository's .venv
(python-shogi is not needed: cshogi gives the legal replies).

    source scripts/env.sh
    python scripts/mates_in_play.py --engine target/release/koma-usi --ms 1000

Prints one line per problem with `--verbose`, then the table row:
`tag total mating score-mate`. A 1 s search finds less on a loaded machine: compare
engines back to back under the same load.
"""

import argparse
import os
import queue
import subprocess
import sys
import threading
import time

import cshogi

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Engine:
    def __init__(self, path, options):
        self.p = subprocess.Popen(
            [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1
        )
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send("usi")
        self.until("usiok", 30)
        for name, value in options:
            self.send(f"setoption name {name} value {value}")
        self.send("isready")
        self.until("readyok", 300)

    def _read(self):
        for line in self.p.stdout:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()

    def until(self, prefix, secs):
        lines = []
        deadline = time.time() + secs
        while True:
            line = self.q.get(timeout=max(0.1, deadline - time.time()))
            if line is None:
                raise RuntimeError("engine closed its output: " + "\n".join(lines[-10:]))
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def mate(self, sfen, ms):
        """`go mate`'s line on `sfen`, or None."""
        self.send(f"position sfen {sfen}")
        self.send(f"go mate {ms}")
        words = self.until("checkmate", ms / 1000 + 60)[-1].split()[1:]
        if not words or words[0] in ("nomate", "timeout", "notimplemented"):
            return None
        return words

    def quit(self):
        try:
            self.send("quit")
            self.p.wait(10)
        except Exception:
            self.p.kill()


def problems(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if fields[1] != "mate":
                continue
            pv = fields[6].split() if len(fields) > 6 else []
            rows.append({"sfen": fields[0], "plies": int(fields[2]), "tag": fields[4], "pv": pv})
    return rows


def still_mates(checker, sfen, move, ms):
    """Whether the attacker still has a forced mate after `move` (every reply allows a mate
    that `go mate` proves within `ms`)."""
    board = cshogi.Board(sfen)
    if move not in [cshogi.move_to_usi(m) for m in board.legal_moves]:
        return False
    board.push_usi(move)
    replies = [cshogi.move_to_usi(m) for m in board.legal_moves]
    if not replies:
        return board.is_check()  # mated (a stalemate-like no-move position is a win too, but rare)
    for r in replies:
        board.push_usi(r)
        after = board.sfen()
        board.pop()
        if checker.mate(after, ms) is None:
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default=os.path.join(ROOT, "target/release/koma-usi"))
    ap.add_argument("--checker", help="engine for go mate checks (default: --engine)")
    ap.add_argument("--model", default=os.path.join(ROOT, "models/shogi.safetensors"))
    ap.add_argument("--ms", type=int, default=1000, help="thinking time per problem")
    ap.add_argument("--movetime", action="store_true", help="go movetime instead of go byoyomi")
    ap.add_argument("--check-ms", type=int, default=3000, help="go mate time of each check")
    ap.add_argument("--set", default=os.path.join(ROOT, "data/tsume/reference.tsv"))
    ap.add_argument("--limit", type=int, default=0, help="first N mate problems only")
    ap.add_argument("--option", action="append", default=[], help="NAME=VALUE, a setoption for the engine")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    options = [("ModelFile", args.model), ("InfoInterval", "0")]
    options += [tuple(o.split("=", 1)) for o in args.option]
    rows = problems(args.set)
    if args.limit:
        rows = rows[: args.limit]
    engine = Engine(args.engine, options)
    checker = Engine(args.checker or args.engine, [("ModelFile", "<uniform>")])
    go = f"go movetime {args.ms}" if args.movetime else f"go byoyomi {args.ms}"
    tags = {}
    start = time.time()
    for i, r in enumerate(rows):
        engine.send("usinewgame")
        engine.send(f"position sfen {r['sfen']}")
        engine.send(go)
        lines = engine.until("bestmove", args.ms / 1000 + 60)
        move = lines[-1].split()[1]
        infos = [l for l in lines if l.startswith("info ") and " score " in l]
        last = infos[-1].split() if infos else []
        score = " ".join(last[last.index("score") + 1 : last.index("score") + 3]) if "score" in last else "-"
        reported = score.startswith("mate ") and not score.split()[1].startswith("-")
        firsts = set(r["pv"][:1])
        if move not in firsts:
            line = checker.mate(r["sfen"], args.check_ms)
            if line:
                firsts.add(line[0])
        mating = move in firsts or still_mates(checker, r["sfen"], move, args.check_ms)
        t = tags.setdefault(r["tag"], [0, 0, 0])
        t[0] += 1
        t[1] += mating
        t[2] += reported
        if args.verbose:
            print(f"{i + 1:3} {r['tag']:11} plies {r['plies']:3} {move:6} {score:12} mating={int(mating)}", flush=True)
    engine.quit()
    checker.quit()
    order = ["mate-3-5", "mate-7-9", "mate-11-13", "mate-15-19", "mate-21-23", "mate-25+"]
    total = [0, 0, 0]
    print(f"# {os.path.relpath(args.engine, ROOT) if args.engine.startswith(ROOT) else args.engine}: {go}, "
          f"{len(rows)} problems, {time.time() - start:.0f} s")
    print("tag\tproblems\tmating_move\tscore_mate")
    for tag in sorted(tags, key=lambda t: order.index(t) if t in order else 99):
        n, m, s = tags[tag]
        total = [total[0] + n, total[1] + m, total[2] + s]
        print(f"{tag}\t{n}\t{m}\t{s}")
    print(f"all\t{total[0]}\t{total[1]}\t{total[2]}")


if __name__ == "__main__":
    sys.exit(main())
