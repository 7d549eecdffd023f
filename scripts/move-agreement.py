#!/usr/bin/env python3
"""How often a network's prior and its search pick a stronger engine's move.

Self-play improves a network only if its search's choices are better than its prior's:
the search's move is the policy target. This measures that directly, on positions of
recorded games (the arena's games.jsonl): an oracle engine's best move (Fairy-Stockfish
at a fixed node count) against koma-usi's move at each node budget (1 node: the prior's
first move), for each network, with the pure search (no book, no root checks).

  scripts/move-agreement.py --games runs/x/games.jsonl --positions 300 \
      --net start=runs/start.safetensors --net next=runs/next.safetensors --nodes 1,64,800

With --samples FILE.hcpe3 (`koma convert-samples` of self-play chunks; needs cshogi, as
in .venv/bin/python) the positions are the full searches of those samples instead, and
the policy targets themselves (each one's most visited move) get a row of their own: how
often self-play's target is the stronger engine's move, against the prior's first move.

Prints a table of agreement rates (with their standard errors) and writes every
position's moves to --out (JSON) so that other summaries can be drawn from it.
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Usi:
    """A USI engine on pipes: options at start, then `best(position, nodes)`."""

    def __init__(self, argv, options):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("usi")
        self.wait("usiok")
        for name, value in options.items():
            self.send(f"setoption name {name} value {value}")
        self.send("isready")
        self.wait("readyok")
        self.send("usinewgame")

    def send(self, line):
        self.proc.stdin.write(line + "\n")

    def wait(self, token):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"move-agreement: the engine stopped before '{token}'")
            if line.split()[:1] == [token]:
                return line.split()

    def best(self, position, nodes):
        self.send(f"position {position}")
        self.send(f"go nodes {nodes}")
        return self.wait("bestmove")[1]

    def close(self):
        self.send("quit")
        self.proc.wait(timeout=30)


def positions_of(paths, count, first_ply, every):
    """`position` commands from the games' plies first_ply, first_ply + every, ..."""
    out = []
    for path in paths:
        for line in open(path):
            game = json.loads(line)
            start = "startpos" if game["start"] == "startpos" else f"sfen {game['start']}"
            for ply in range(first_ply, len(game["moves"]), every):
                moves = game["moves"][:ply]
                out.append(f"{start} moves {' '.join(moves)}" if moves else start)
    if len(out) < count:
        sys.exit(f"move-agreement: {len(out)} positions in the games, {count} asked")
    # Spread over all the games, not the first few.
    step = len(out) / count
    return [out[int(i * step)] for i in range(count)]


def targets_of(path, count):
    """(`position` command, the target's most visited move) of the full searches in an hcpe3
    file of one-move games (`koma convert-samples`), spread over the file."""
    import numpy as np
    import cshogi
    header = np.dtype([("hcp", np.uint8, 32), ("moveNum", "<u2"), ("result", "u1"), ("opponent", "u1")])
    info = np.dtype([("move16", "<u2"), ("eval", "<i2"), ("candidateNum", "<u2")])
    visits = np.dtype([("move16", "<u2"), ("visitNum", "<u2")])
    data, off, board, out = open(path, "rb").read(), 0, cshogi.Board(), []
    while off < len(data):
        game = np.frombuffer(data, header, 1, off)[0]
        off += header.itemsize
        board.set_hcp(game["hcp"])
        for _ in range(int(game["moveNum"])):
            move = np.frombuffer(data, info, 1, off)[0]
            off += info.itemsize
            cands = np.frombuffer(data, visits, int(move["candidateNum"]), off)
            off += visits.itemsize * len(cands)
            if len(cands) > 0:
                best = int(cands["move16"][np.argmax(cands["visitNum"])])
                out.append((f"sfen {board.sfen()}", cshogi.move_to_usi(board.move_from_move16(best))))
            board.push(board.move_from_move16(int(move["move16"])))
    if len(out) < count:
        sys.exit(f"move-agreement: {len(out)} full searches in {path}, {count} asked")
    step = len(out) / count
    return [out[int(i * step)] for i in range(count)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", action="append", default=[], help="games.jsonl of `koma arena` (repeatable)")
    ap.add_argument("--samples", help="an hcpe3 file of `koma convert-samples`: its full searches' positions and targets")
    ap.add_argument("--net", action="append", required=True, help="NAME=MODEL (repeatable)")
    ap.add_argument("--nodes", default="1,64,800", help="koma-usi's node budgets")
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--first-ply", type=int, default=12)
    ap.add_argument("--every", type=int, default=8)
    ap.add_argument("--oracle", default="/usr/games/fairy-stockfish")
    ap.add_argument("--oracle-nodes", type=int, default=128000)
    ap.add_argument("--engine", default=os.path.join(ROOT, "target/release/koma-usi"))
    ap.add_argument("--out", help="JSON of every position's moves")
    args = ap.parse_args()
    budgets = [int(n) for n in args.nodes.split(",")]
    nets = dict(spec.split("=", 1) for spec in args.net)
    if bool(args.games) == bool(args.samples):
        sys.exit("move-agreement: give --games or --samples")
    if args.samples:
        rows = [{"position": p, "target": t} for p, t in targets_of(args.samples, args.positions)]
    else:
        rows = [{"position": p} for p in positions_of(args.games, args.positions, args.first_ply, args.every)]

    oracle = Usi([args.oracle], {"Threads": 1, "USI_Hash": 64})
    for i, row in enumerate(rows):
        row["oracle"] = oracle.best(row["position"], args.oracle_nodes)
        print(f"\roracle {i + 1}/{len(rows)}", end="", file=sys.stderr)
    oracle.close()
    print(file=sys.stderr)

    pure = {"USI_OwnBook": "false", "RootTactics": 0, "RootMateNodes": 0, "MateSearchPlies": 0,
            "Threads": 1, "TorchThreads": 1}
    for name, model in nets.items():
        engine = Usi([args.engine], {"ModelFile": os.path.abspath(model), **pure})
        for i, row in enumerate(rows):
            row[name] = {str(n): engine.best(row["position"], n) for n in budgets}
            print(f"\r{name} {i + 1}/{len(rows)}", end="", file=sys.stderr)
        engine.close()
        print(file=sys.stderr)

    if args.out:
        with open(args.out + ".tmp", "w") as f:
            json.dump({"oracle_nodes": args.oracle_nodes, "nets": nets, "rows": rows}, f)
        os.replace(args.out + ".tmp", args.out)
    n = len(rows)
    print(f"agreement with {os.path.basename(args.oracle)} at {args.oracle_nodes} nodes, {n} positions "
          f"(standard error about {math.sqrt(0.25 / n):.3f})")
    print("network".ljust(12) + "".join(f"{b:>10}" for b in budgets))
    for name in nets:
        rates = [sum(r[name][str(b)] == r["oracle"] for r in rows) / n for b in budgets]
        print(name.ljust(12) + "".join(f"{x:>10.3f}" for x in rates))
    if args.samples:
        print(f"the samples' policy targets (their most visited move): {sum(r['target'] == r['oracle'] for r in rows) / n:.3f}")
        first = next(iter(nets))
        prior = [r[first][str(budgets[0])] for r in rows]
        changed = sum(p != r["target"] for p, r in zip(prior, rows))
        better = sum(p != r["oracle"] and r["target"] == r["oracle"] for p, r in zip(prior, rows))
        worse = sum(p == r["oracle"] and r["target"] != r["oracle"] for p, r in zip(prior, rows))
        z = (better - worse) / math.sqrt(better + worse) if better + worse else 0.0
        print(f"the target changes {first}'s move at {budgets[0]} node(s) on {changed / n:.0%} of the positions: "
              f"{better} times to the oracle's move, {worse} times away from it (z {z:.2f})")


if __name__ == "__main__":
    main()
