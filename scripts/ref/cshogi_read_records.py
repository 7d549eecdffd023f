#!/usr/bin/env python3
"""Reads game records with cshogi's own parsers and prints what it read, as JSON.

  cshogi_read_records.py FILE...

For each file, one line: {"file": FILE, "games": [{"sfen": ..., "moves": [USI, ...]}]}.
`.kif`/`.kifu` files go through cshogi.KIF.Parser.parse_file (which decodes `.kif` as
Shift_JIS/cp932 and `.kifu` as UTF-8, the convention Japanese programs follow), `.csa`
files through cshogi.CSA.Parser.parse_file (every game of a multi-game file). A file
cshogi cannot read prints {"file": FILE, "error": MESSAGE} and the exit status is 1.

koma/tests/records_cshogi.rs runs it on what `koma convert` and `koma arena` write.
"""
import json
import sys

import cshogi
import cshogi.CSA
import cshogi.KIF


def games_of(path):
    if path.endswith(".kif") or path.endswith(".kifu"):
        parsers = [cshogi.KIF.Parser.parse_file(path)]
    elif path.endswith(".csa"):
        parsers = cshogi.CSA.Parser.parse_file(path)
    else:
        raise ValueError("not a .kif, .kifu or .csa file")
    return [{"sfen": p.sfen, "moves": [cshogi.move_to_usi(m) for m in p.moves]} for p in parsers]


def main():
    status = 0
    for path in sys.argv[1:]:
        try:
            print(json.dumps({"file": path, "games": games_of(path)}))
        except Exception as e:  # report every file, then fail
            print(json.dumps({"file": path, "error": f"{type(e).__name__}: {e}"}))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
