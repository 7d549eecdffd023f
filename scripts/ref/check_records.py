#!/usr/bin/env python3
"""Does cshogi read what koma writes? Makes data/records/cshogi-check/.

For every game of data/fixtures/records/ (its .csa file is the source) this
runs `koma convert` to write the game as

  <game>.csa    CSA V2.2
  <game>.kifu   KIF, UTF-8
  <game>.kif    KIF, Shift_JIS (cp932)
  <game>.ki2    KI2, Shift_JIS (cp932)

into data/records/cshogi-check/, parses each with cshogi 1.1.0 (CSA.Parser,
KIF.Parser, KI2.Parser, the same way their parse_file does) and compares
with the fixture's "game" (the truth): start position, moves, names, end
marker and winner. The verdicts go to data/records/cshogi-check/verdicts.json.

It also writes data/records/cshogi-check/ki2-moves.tsv: cshogi's KI2 text
(move_to_ki2) of every legal move that needs 左/右/直/上/引/寄 or 打, in the
positions of the fixture games and of seeded random games, as
`sfen<TAB>usi<TAB>text<TAB>pinned?`, for the Rust test to compare with
koma's. "pinned" marks moves where cshogi counts a pinned rival piece.

The Rust test rules/tests/records.rs then checks, without Python, that koma
still writes byte for byte what was checked here, and that every verdict
agrees or has a note naming a known cshogi limit.

Usage (repository root): .venv/bin/python scripts/ref/check_records.py [--koma target/debug/koma]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

import cshogi
import cshogi.KI2
import cshogi.KIF

FIXTURES = "data/fixtures/records"
OUT = "data/records/cshogi-check"

# (extension, koma convert arguments, cshogi parser, encoding cshogi reads it in)
TARGETS = [
    ("csa", ["--to", "csa"], "csa", "utf-8"),
    ("kifu", ["--to", "kif", "--encoding", "utf-8"], "kif", "utf-8"),
    ("kif", ["--to", "kif", "--encoding", "sjis"], "kif", "cp932"),
    ("ki2", ["--to", "ki2", "--encoding", "sjis"], "ki2", "cp932"),
]


def position_key(sfen):
    """Board, side and hands as cshogi normalises them (no move number)."""
    return " ".join(cshogi.Board(sfen).sfen().split()[:3])


def winner_name(win):
    return {cshogi.BLACK_WIN: "sente", cshogi.WHITE_WIN: "gote", cshogi.DRAW: "draw"}.get(win)


def parse(path, parser, encoding):
    if parser == "csa":
        p = cshogi.Parser()
        p.parse_csa_file(path)
        return {
            "sfen": p.sfen,
            "moves": [cshogi.move_to_usi(m) for m in p.moves],
            "endgame": p.endgame,
            "winner": winner_name(p.win),
            "names": list(p.names),
        }
    with open(path, encoding=encoding) as f:
        text = f.read()
    p = (cshogi.KIF.Parser if parser == "kif" else cshogi.KI2.Parser).parse_str(text)
    return {
        "sfen": p.sfen,
        "moves": [cshogi.move_to_usi(m) for m in p.moves],
        "endgame": p.endgame,
        "winner": winner_name(p.win),
        "names": list(p.names),
    }


def expected_end(truth, parser):
    """What cshogi can say about the truth's end in this format, and why
    not more. KIF/KI2 parsers read every "...の勝ち" line as %TORYO, and the
    CSA parser leaves win at DRAW after %TSUMI."""
    endgame, winner, notes = truth["csa_endgame"], truth["winner"], []
    if parser == "ki2" and endgame == "%TIME_UP":
        notes.append("koma writes KI2 time losses as 'まで…手で時間切れにより…の勝ち' (Kifu for Windows), "
                     "which cshogi's KI2 parser does not read")
        return None, None, notes
    if parser in ("kif", "ki2") and endgame in ("%TSUMI", "%TIME_UP"):
        notes.append(f"cshogi's {parser.upper()} parser reads '...の勝ち' as %TORYO, not {endgame}")
        endgame = "%TORYO"
    if parser == "csa" and endgame == "%TSUMI":
        notes.append("cshogi's CSA parser leaves win at DRAW after %TSUMI")
        winner = "draw"
    return endgame, winner, notes


def ki2_lines(board, seen, out):
    """cshogi's KI2 text of the legal moves of `board` that need more than
    square and piece (no previous move, so never 同)."""
    sfen = board.sfen()
    key = " ".join(sfen.split()[:3])
    if key in seen:
        return
    seen.add(key)
    plain = cshogi.Board(sfen)  # no history: move_to_ki2 looks at peek() for 同
    legal = list(plain.legal_moves)
    for m in legal:
        text = cshogi.KI2.move_to_ki2(m, plain)[1:]
        if any(c in text for c in "左右直上引寄打"):
            # move_to_ki2 counts pieces that could move there ignoring pins
            # (pseudo-legal moves); koma counts legal moves only. Mark the
            # moves where that makes a difference.
            def rivals(moves):
                return {cshogi.move_from(x) for x in moves if not cshogi.move_is_drop(x)
                        and cshogi.move_to(x) == cshogi.move_to(m)
                        and cshogi.move_from_piece_type(x) == cshogi.move_from_piece_type(m)}
            pinned = "" if cshogi.move_is_drop(m) or rivals(plain.pseudo_legal_moves) == rivals(legal) else "pinned"
            out.append(f"{sfen}\t{cshogi.move_to_usi(m)}\t{text}\t{pinned}")


def write_ki2_moves():
    import random
    rng = random.Random(7)
    seen, out = set(), []
    for source in sorted(glob.glob(f"{FIXTURES}/*.csa.expected.json")):
        truth = json.load(open(source))["game"]
        board = cshogi.Board(truth["sfen"])
        for usi in truth["moves"]:
            ki2_lines(board, seen, out)
            board.push_usi(usi)
    # Random games with many pieces able to reach the same square: golds
    # and silvers in hand are dropped often.
    for _ in range(200):
        board = cshogi.Board()
        for _ in range(rng.randrange(40, 160)):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(rng.choice(moves))
            ki2_lines(board, seen, out)
    # Keep at most 40 moves of each kind of text (金左, 銀引不成, 龍右...),
    # so that the rare combinations are all there and the file stays small.
    import re
    kept, per_kind = [], {}
    for line in out:
        kind = re.sub(r"^(同　?|..)", "", line.split("\t")[2])
        per_kind[kind] = per_kind.get(kind, 0) + 1
        if per_kind[kind] <= 40:
            kept.append(line)
    out = kept
    with open(f"{OUT}/ki2-moves.tsv", "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"ki2-moves.tsv: {len(out)} moves needing 左/右/直/上/引/寄 or 打")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--koma", default="target/debug/koma")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    verdicts = []
    for source in sorted(glob.glob(f"{FIXTURES}/*.csa")):
        game = os.path.basename(source)[: -len(".csa")]
        truth = json.load(open(source + ".expected.json"))["game"]
        for ext, convert_args, parser, encoding in TARGETS:
            out = f"{OUT}/{game}.{ext}"
            subprocess.run([args.koma, "convert", *convert_args, source, "-o", out], check=True)
            notes = []
            start_is_position = game.startswith("position")
            try:
                got = parse(out, parser, encoding)
            except Exception as e:  # a parse failure is a verdict, not a crash
                if parser == "ki2" and start_is_position:
                    notes.append("cshogi's KI2 parser has no board diagrams (BOD): it plays the moves from "
                                 "the even position and fails")
                verdicts.append({"file": os.path.basename(out), "source": os.path.basename(source),
                                 "format": parser, "encoding": encoding, "error": repr(e),
                                 "agree": {}, "notes": notes})
                continue
            end, winner, end_notes = expected_end(truth, parser)
            agree = {
                "sfen": position_key(got["sfen"]) == position_key(truth["sfen"]),
                "moves": got["moves"] == truth["moves"],
                "names": got["names"] == truth["names"],
                "endgame": got["endgame"] == end,
                "winner": got["winner"] == winner,
            }
            if parser == "kif" and start_is_position:
                notes.append("cshogi's KIF parser ignores the board diagram (BOD) and starts from the even position")
            if parser == "kif" and end == "%KACHI" and not agree["endgame"]:
                notes.append("cshogi's KIF parser does not read 入玉勝ち as an end")
            notes += end_notes
            verdicts.append({
                "file": os.path.basename(out),
                "source": os.path.basename(source),
                "format": parser,
                "encoding": encoding,
                "cshogi": {k: got[k] for k in ("sfen", "endgame", "winner", "names")} | {"plies": len(got["moves"])},
                "truth": {"sfen": truth["sfen"], "endgame": truth["csa_endgame"], "winner": truth["winner"],
                          "plies": len(truth["moves"])},
                "agree": agree,
                "notes": notes,
            })
    write_ki2_moves()
    with open(f"{OUT}/verdicts.json", "w") as f:
        json.dump(verdicts, f, ensure_ascii=False, indent=1)
        f.write("\n")
    total = len(verdicts)
    for field in ("sfen", "moves", "names", "endgame", "winner"):
        n = sum(1 for v in verdicts if v["agree"].get(field))
        print(f"{field}: {n}/{total} agree")
    for v in verdicts:
        bad = [k for k, ok in v["agree"].items() if not ok]
        if bad or "error" in v:
            print(v["file"], "disagree:", bad, v.get("error", ""), v["notes"])


if __name__ == "__main__":
    sys.exit(main())
