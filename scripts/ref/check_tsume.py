#!/usr/bin/env python3
"""Check koma-usi's `go mate` answers on data/tsume/reference.tsv with cshogi, and time them.

For every position of the reference set the engine (no network) gets

    position sfen <sfen>
    go mate <ms>

and its `checkmate ...` answer is checked with cshogi:

* the verdict is the reference's (a mate for `mate`, `checkmate nomate` for `nomate`;
  `checkmate timeout` is a failure);
* a mate's moves are legal (cshogi's legal moves), every attacker's move gives check,
  and the line ends with the defender in check without a legal move.

Times, by the reference's buckets (median and maximum): the engine's own `info time`
(wall clock of the answer: proof, mating line and shortening), the wall clock until its
first mate (its `info string first mate: ... after <ms> ms`; for no-mates the answer's),
and the CPU time the engine process spent on the answer (utime + stime from
/proc, 10 ms resolution; on a loaded machine the wall clock runs ahead of it).

With `--cshogi`, cshogi's DfPn (the reference's labeller, same node limit as the set's
header says) is timed on every position too (its CPU time, in this process), for
comparison.

Usage (repository root, after `cargo build --release -p koma-usi`):

    .venv/bin/python scripts/ref/check_tsume.py [--engine target/release/koma-usi]
        [--set data/tsume/reference.tsv] [--ms 60000] [--out results.tsv] [--cshogi]

Prints a summary and a Markdown table (docs/tsume.md); exits 1 when a check fails.
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import time

import cshogi


def read_set(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            f_ = line.rstrip("\n").split("\t")
            rows.append({"sfen": f_[0], "verdict": f_[1], "plies": int(f_[2]), "tag": f_[4]})
    return rows


def check_line(sfen, moves):
    """None if the moves are a legal mating line with a check at every attacker's move,
    else what is wrong."""
    board = cshogi.Board(sfen)
    attacker = board.turn
    if len(moves) % 2 == 0:
        return f"{len(moves)} plies: a mate has an odd number"
    for i, u in enumerate(moves):
        legal = {cshogi.move_to_usi(m): m for m in board.legal_moves}
        if u not in legal:
            return f"ply {i + 1}: {u} is not legal"
        mover = board.turn
        board.push(legal[u])
        if mover == attacker and not board.is_check():
            return f"ply {i + 1}: {u} gives no check"
    if board.turn == attacker or not board.is_check() or any(True for _ in board.legal_moves):
        return "the line does not end in mate"
    return None


class Engine:
    def __init__(self, path):
        self.proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("usi")
        self.until("usiok")
        self.send("setoption name ModelFile value /nonexistent/no-network-needed.safetensors")
        self.send("isready")
        self.until("readyok")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def until(self, prefix):
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"engine closed its output; last lines: {lines[-5:]}")
            line = line.rstrip("\n")
            lines.append(line)
            if line.startswith(prefix):
                return lines

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime are fields 14 and 15 of the whole line (11 and 12 after the name).
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        self.send("quit")
        self.proc.wait(timeout=30)


def cshogi_seconds(sfen, nodes=1_000_000):
    """CPU seconds of cshogi's DfPn on the position (the reference's labelling search)."""
    dfpn = cshogi.DfPn(nodes=nodes)
    board = cshogi.Board(sfen)
    start = time.process_time()
    dfpn.search(board)
    return time.process_time() - start


def table(results):
    with_cshogi = "cshogi" in results[0]
    out = ["| bucket | positions | first mate: median | max | answer: median | max | answer CPU: median | max |"
           + (" cshogi DfPn CPU: median | max |" if with_cshogi else ""),
           "|---|---|---|---|---|---|---|---|" + ("---|---|" if with_cshogi else "")]
    by = collections.OrderedDict()
    for r in results:
        by.setdefault(r["tag"], []).append(r)
    by["all"] = results
    for tag, rs in by.items():
        firsts = [r["first_ms"] / 1000 for r in rs]
        walls = [r["ms"] / 1000 for r in rs]
        cpus = [r["cpu"] for r in rs]
        row = (f"| {tag} | {len(rs)} | {statistics.median(firsts):.3f} s | {max(firsts):.3f} s | "
               f"{statistics.median(walls):.3f} s | {max(walls):.3f} s | "
               f"{statistics.median(cpus):.2f} s | {max(cpus):.2f} s |")
        if with_cshogi:
            cs = [r["cshogi"] for r in rs]
            row += f" {statistics.median(cs):.2f} s | {max(cs):.2f} s |"
        out.append(row)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", default="target/release/koma-usi")
    ap.add_argument("--set", default="data/tsume/reference.tsv")
    ap.add_argument("--ms", type=int, default=60000, help="go mate time per position")
    ap.add_argument("--out", help="write per-position results here (TSV)")
    ap.add_argument("--cshogi", action="store_true", help="time cshogi's DfPn on every position too")
    args = ap.parse_args()
    rows = read_set(args.set)
    engine = Engine(args.engine)
    # A first solve (of the start position) allocates the solver's table.
    solve(engine, args.ms)
    results, failures = [], []
    lengths = collections.Counter()
    for i, row in enumerate(rows):
        engine.send(f"position sfen {row['sfen']}")
        moves, ms, first_ms, cpu, nodes = solve(engine, args.ms)
        answer = " ".join(moves)
        problem = None
        if row["verdict"] == "nomate":
            if moves != ["nomate"]:
                problem = f"expected nomate, got {answer}"
        elif moves and moves[0] in ("nomate", "timeout", "notimplemented"):
            problem = f"expected a mate (cshogi: {row['plies']} plies), got {answer}"
        else:
            problem = check_line(row["sfen"], moves)
            n = len(moves)
            lengths["same" if n == row["plies"] else "shorter" if n < row["plies"] else "longer"] += 1
        if problem:
            failures.append(f"{row['sfen']}: {problem}")
        results.append({**row, "answer": answer, "ms": ms, "first_ms": first_ms, "cpu": cpu, "nodes": nodes,
                        "ok": problem is None})
        if args.cshogi:
            results[-1]["cshogi"] = cshogi_seconds(row["sfen"])
        print(f"{i + 1}/{len(rows)} {row['tag']} {ms} ms {'ok' if problem is None else 'FAIL ' + problem}",
              file=sys.stderr)
    engine.close()
    if args.out:
        with open(args.out, "w") as f:
            f.write("sfen\ttag\treference\tcshogi_plies\tanswer\tok\tms\tfirst_ms\tcpu_s\tnodes\n")
            for r in results:
                f.write(f"{r['sfen']}\t{r['tag']}\t{r['verdict']}\t{r['plies']}\t{r['answer']}\t{r['ok']}\t"
                        f"{r['ms']}\t{r['first_ms']}\t{r['cpu']:.2f}\t{r['nodes']}\n")
    mates = sum(1 for r in rows if r["verdict"] == "mate")
    print(f"{len(rows)} positions ({mates} mates, {len(rows) - mates} without): {len(failures)} failures")
    print(f"mate lengths against cshogi's: {lengths['same']} the same, {lengths['shorter']} shorter, "
          f"{lengths['longer']} longer")
    print(table(results))
    for f_ in failures:
        print("FAIL", f_)
    sys.exit(1 if failures else 0)


def solve(engine, ms):
    """`go mate ms` on the position sent: the answer's words after `checkmate`, the
    engine's time (ms), its time to the first mate (ms), the CPU seconds the engine
    spent and the nodes."""
    cpu = engine.cpu_seconds()
    start = time.monotonic()
    engine.send(f"go mate {ms}")
    lines = engine.until("checkmate")
    wall = time.monotonic() - start
    cpu = engine.cpu_seconds() - cpu
    info = [l for l in lines if l.startswith("info time ")]
    ms_engine = int(info[-1].split()[2]) if info else round(1000 * wall)
    nodes = int(info[-1].split()[4]) if info else 0
    first = [l for l in lines if l.startswith("info string first mate: ")]
    first_ms = int(first[-1].split(" after ")[1].split()[0]) if first else ms_engine
    return lines[-1].split()[1:], ms_engine, first_ms, cpu, nodes


if __name__ == "__main__":
    main()
