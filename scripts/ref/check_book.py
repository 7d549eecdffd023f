#!/usr/bin/env python3
"""Reads an opening book in YaneuraOu's text format with rsshogi (an independent reader of
the format, from PyPI) and prints, for each SFEN read from stdin (one a line), the moves
rsshogi finds for it: `SFEN<TAB>move ponder score depth count;...` in the file's order,
`SFEN<TAB>-` when the book lacks the position. The first line printed is rsshogi's
diagnosis of the file (`kind ...`).

Usage: check_book.py BOOK < sfens.txt
"""
import sys

from rsshogi.book import YaneuraOuBook


def main() -> int:
    book = YaneuraOuBook.open(sys.argv[1])
    diagnosis = book.diagnostics()
    print(f"kind {diagnosis.kind} complete {diagnosis.complete}")
    for line in sys.stdin:
        sfen = line.strip()
        if not sfen:
            continue
        entry = book.lookup_sfen(sfen)
        if entry is None:
            print(f"{sfen}\t-")
            continue
        moves = ";".join(
            f"{m.mv.to_usi()} {m.ponder.to_usi() if m.ponder else 'none'} {m.score} {m.depth} {m.count}" for m in entry.moves
        )
        print(f"{sfen}\t{moves}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
