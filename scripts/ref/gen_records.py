#!/usr/bin/env python3
"""Make data/fixtures/records/: game records written by cshogi's exporters.

For each game (played by Fairy-Stockfish over USI at a small depth, with a
few random opening moves for variety, or built from a known position) this
writes, with cshogi 1.1.0:

  <name>.csa    cshogi.CSA.Exporter (UTF-8; ASCII content)
  <name>.kifu   cshogi.KIF.Exporter, UTF-8 (the exporter picks UTF-8 for .kifu)
  <name>.kif    cshogi.KIF.Exporter, Shift_JIS/cp932 (for .kif): only some games
  <name>.ki2    cshogi.KI2.Exporter (always cp932; the exporter only knows the
                even-game start position, so only for games from the start)

and next to each file `<file>.expected.json`:

  {"file": ..., "format": "csa"|"kif"|"ki2", "encoding": ...,
   "game": {what was written: start sfen, moves (USI), result, names, ...},
   "cshogi": {what cshogi's own parser reads back: sfen, moves (USI),
              endgame, win, names, times, comments, var_info, ... or error},
   "agree": {field: true/false, ...},
   "notes": [...]}

"game" is the truth the generator wrote; "cshogi" is the independent
reading, including its mistakes (listed in "notes" and in the README).

Usage: scripts/ref/gen_records.py [--outdir data/fixtures/records] [--seed 3]
"""
import argparse
import datetime
import json
import os
import random
import subprocess
import sys

import cshogi
import cshogi.CSA
import cshogi.KI2
import cshogi.KIF

FSF = "/usr/games/fairy-stockfish"
START = datetime.datetime(2024, 5, 1, 10, 0, 0)

HANDICAPS = {  # KIF name -> SFEN (giver = gote, moves first)
    "角落ち": "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
    "二枚落ち": "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
}


class Usi:
    """Minimal USI driver (depth-limited search, score parsing)."""

    def __init__(self, exe=FSF):
        self.p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.cmd("usi")
        self.wait("usiok")
        self.cmd("isready")
        self.wait("readyok")

    def cmd(self, s):
        self.p.stdin.write(s + "\n")
        self.p.stdin.flush()

    def wait(self, prefix):
        lines = []
        while True:
            l = self.p.stdout.readline()
            if not l:
                raise RuntimeError("engine exited")
            l = l.strip()
            lines.append(l)
            if l.startswith(prefix):
                return lines

    def go(self, sfen, moves, depth):
        self.cmd(f"position sfen {sfen}" + (" moves " + " ".join(moves) if moves else ""))
        self.cmd(f"go depth {depth}")
        lines = self.wait("bestmove")
        score = None
        for l in lines:
            t = l.split()
            if "score" in t:
                i = t.index("score")
                score = ("cp", int(t[i + 2])) if t[i + 1] == "cp" else ("mate", int(t[i + 2]))
        return lines[-1].split()[1], score

    def close(self):
        self.cmd("quit")
        self.p.wait()


def play(eng, rng, sfen, depth, max_plies, random_plies, stop_at_resign=True):
    """Engine self-play from sfen. Returns (moves, ending, board, times) where ending is
    'mate' (side to move is mated), 'resign' (side to move resigns: engine sees mate
    against it or is 2500cp down), or 'max'."""
    board = cshogi.Board(sfen)
    moves, times = [], []
    while len(moves) < max_plies:
        if board.is_game_over():
            return moves, "mate", board, times
        legal = list(board.legal_moves)
        if len(moves) < random_plies:
            m = rng.choice(legal)
            score = None
            u = cshogi.move_to_usi(m)
        else:
            u, score = eng.go(sfen, moves, depth)
            if u in ("resign", "win"):
                return moves, "resign", board, times
            if stop_at_resign and score and len(moves) > 40 and (
                    (score[0] == "mate" and score[1] < 0) or (score[0] == "cp" and score[1] < -2500)):
                return moves, "resign", board, times
        m = board.move_from_usi(u)
        assert board.is_legal(m), (u, board.sfen())
        board.push(m)
        moves.append(u)
        times.append(rng.randint(1, 30))
    return moves, "max", board, times


def csa_read(path):
    ps = cshogi.CSA.Parser.parse_file(path)
    p = ps[0]
    return {
        "games_in_file": len(ps),
        "sfen": p.sfen,
        "moves": [cshogi.move_to_usi(m) for m in p.moves],
        "endgame": p.endgame,
        "win": {cshogi.BLACK_WIN: "black", cshogi.WHITE_WIN: "white", cshogi.DRAW: "draw"}.get(p.win, p.win),
        "names": p.names,
        "times": list(p.times),
        "comments": p.comments,
        "var_info": p.var_info,
        "version": p.version,
    }


def kif_read(path, mod):
    try:
        if path.endswith(".kifu") or mod is cshogi.KI2:
            enc = "utf-8" if path.endswith(".kifu") else "cp932"
            with open(path, encoding=enc) as f:
                p = mod.Parser.parse_str(f.read())
        else:
            p = mod.Parser.parse_file(path)  # .kif: cshogi decodes cp932
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    return {
        "sfen": p.sfen,
        "moves": [cshogi.move_to_usi(m) for m in p.moves],
        "endgame": p.endgame,
        "win": {cshogi.BLACK_WIN: "black", cshogi.WHITE_WIN: "white", cshogi.DRAW: "draw"}.get(p.win, p.win),
        "names": p.names,
        "times": list(getattr(p, "times", [])),
        "comments": p.comments,
        "header_comment": getattr(p, "comment", None),
        "var_info": p.var_info,
        "starttime": p.starttime.isoformat() if getattr(p, "starttime", None) else None,
    }


def pos_key(sfen):
    """Board, side and hands, normalised by cshogi (hand order, no move number)."""
    return cshogi.Board(sfen).sfen().rsplit(" ", 1)[0]


WIN_WORD = {"sente": "black", "gote": "white", "draw": "draw"}


def write_json(path, fmt, enc, game, read, notes):
    agree = {}
    if "error" not in read:
        agree["sfen"] = pos_key(read["sfen"]) == pos_key(game["sfen"])
        agree["winner"] = read["win"] == WIN_WORD[game["winner"]]
        agree["moves"] = read["moves"] == game["moves"]
        agree["names"] = list(read["names"]) == game["names"]
        agree["endgame"] = read["endgame"] == game["csa_endgame"]
    std = game["sfen"] == cshogi.STARTING_SFEN
    if "error" not in read:
        if not agree["sfen"] and fmt == "kif" and not std and not game.get("handicap"):
            notes.append("cshogi's KIF parser ignores the BOD board diagram and assumes the even-game start position")
        if fmt in ("kif", "ki2") and read["endgame"] == "%TORYO" and game["csa_endgame"] != "%TORYO":
            notes.append("cshogi's KIF/KI2 parser turns every '...の勝ち' result line into %TORYO")
        if fmt == "csa" and game["csa_endgame"] == "%TSUMI" and read["win"] == "draw":
            notes.append("cshogi's CSA parser leaves win at 0 (= DRAW) after %TSUMI")
        if fmt in ("kif", "ki2") and game["csa_endgame"] == "%ILLEGAL_MOVE" and not agree["winner"]:
            notes.append("cshogi's KIF/KI2 exporters name the player who made the last recorded move as the one "
                         "who lost by an illegal move; its CSA parser (and this record) make the side to move the loser")
        if fmt == "kif" and game.get("handicap") and game["csa_endgame"] == "%TORYO" and not agree["winner"]:
            notes.append("cshogi's KIF exporter writes the winner of a resigned game by move-number parity as if "
                         "sente moved first: wrong in handicap games, where gote (uwate) moves first")
        if fmt == "kif" and game["csa_endgame"] == "%KACHI" and read["endgame"] is None:
            notes.append("cshogi's KIF exporter writes 'まで2手で入玉宣言', which its own parser does not recognise "
                         "(it knows '...手の入玉勝ち')")
    doc = {"file": os.path.basename(path), "format": fmt, "encoding": enc, "game": game, "cshogi": read,
           "agree": agree, "notes": notes}
    with open(path + ".expected.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    bad = [k for k, v in agree.items() if not v]
    print(f"{os.path.basename(path):40s} cshogi reads back: {'ALL OK' if not bad and agree else 'differs: ' + str(bad or read.get('error'))}",
          file=sys.stderr)


# KIF end reasons cshogi's KIF exporter knows; CSA ending -> KIF reason
KIF_REASON = {"%TORYO": "resign", "%SENNICHITE": "sennichite", "%KACHI": "win", "%ILLEGAL_MOVE": "illegal_lose"}
KIF_MANUAL = {"%TSUMI": "詰み", "%TIME_UP": "切れ負け"}


def export(outdir, name, game, times=None, comments=None, kif_sjis=False, ki2=False, info_lines=None):
    """Write one game in all formats; game = dict(sfen, moves, csa_endgame, names, handicap, ...)."""
    board = cshogi.Board(game["sfen"])
    start_is_std = game["sfen"] == cshogi.STARTING_SFEN
    # ---- CSA
    path = os.path.join(outdir, name + ".csa")
    e = cshogi.CSA.Exporter(path, encoding="utf-8")
    var_info = {"EVENT": "koma fixtures", "START_TIME": START.strftime("%Y/%m/%d %H:%M:%S")}
    e.info(init_board=cshogi.Board(game["sfen"]), names=game["names"], var_info=var_info, version="V2.2")
    b = cshogi.Board(game["sfen"])
    for i, u in enumerate(game["moves"]):
        m = b.move_from_usi(u)
        e.move(m, time=times[i] if times else None, comment=(comments or {}).get(i))
        b.push(m)
    e.endgame(game["csa_endgame"], time=game.get("end_time"))
    e.close()
    notes = list(game.get("notes_csa", []))
    write_json(path, "csa", "utf-8", game, csa_read(path), notes)

    # ---- KIF (UTF-8 .kifu, and cp932 .kif when asked)
    exts = [".kifu"] + ([".kif"] if kif_sjis else [])
    for ext in exts:
        path = os.path.join(outdir, name + ext)
        k = cshogi.KIF.Exporter(path)
        if start_is_std:
            k.header(game["names"], starttime=START)
        elif game.get("handicap"):
            k.header(game["names"], starttime=START, handicap=game["handicap"])
        else:
            k.header(game["names"], starttime=START, handicap=cshogi.Board(game["sfen"]))
        b = cshogi.Board(game["sfen"])
        total = 0
        for i, u in enumerate(game["moves"]):
            m = b.move_from_usi(u)
            t = times[i] if times else 0
            total += t
            k.move(m, sec=t, sec_sum=total)
            if info_lines and i in info_lines:
                k.info(info_lines[i])
            b.push(m)
        notes = list(game.get("notes_kif", []))
        end = game["csa_endgame"]
        if end in KIF_REASON:
            k.end(KIF_REASON[end])
        k.close()
        if end in KIF_MANUAL:
            # cshogi's KIF exporter has no such end reason: append the standard lines by hand
            n = len(game["moves"])
            loser_is_sente = (b.turn == cshogi.BLACK)
            winner = "後手" if loser_is_sente else "先手"
            enc = "utf-8" if ext == ".kifu" else "cp932"
            h, mi, se = cshogi.KIF.sec_to_time(total)
            with open(path, "a", encoding=enc) as f:
                f.write("{:>4} {}      ({:>2}:{:02}/{:02}:{:02}:{:02})\n".format(
                    n + 1, KIF_MANUAL[end] + "        ", 0, 0, h, mi, se))
                f.write(f"まで{n}手で{winner}の勝ち\n")
            notes.append(f"cshogi's KIF exporter cannot write {end}: the last two lines were appended by gen_records.py")
        read = kif_read(path, cshogi.KIF)
        write_json(path, "kif", "utf-8" if ext == ".kifu" else "cp932", game, read, notes)

    # ---- KI2 (only from the even-game start position)
    if ki2 and start_is_std:
        path = os.path.join(outdir, name + ".ki2")
        k = cshogi.KI2.Exporter(path)
        k.header(game["names"], starttime=START)
        b = cshogi.Board(game["sfen"])
        for i, u in enumerate(game["moves"]):
            m = b.move_from_usi(u)
            k.move(m, comment=(comments or {}).get(i))
            b.push(m)
        notes = []
        if game["csa_endgame"] in ("%TORYO", "%SENNICHITE", "%KACHI", "%ILLEGAL_MOVE", "%JISHOGI"):
            k.end(game["csa_endgame"])
            k.close()
        else:
            k.close()
            winner = "後手" if b.turn == cshogi.BLACK else "先手"
            with open(path, "a", encoding="cp932") as f:
                f.write(f"まで{len(game['moves'])}手で{winner}の勝ち\n")
            notes.append(f"cshogi's KI2 exporter cannot write {game['csa_endgame']}: the result line was appended by gen_records.py")
        write_json(path, "ki2", "cp932", game, kif_read(path, cshogi.KI2), notes)


def result_of(board, ending):
    """(csa endgame, winner) for an ending where the side to move of `board` lost."""
    loser = board.turn
    return {"mate": "%TSUMI", "resign": "%TORYO"}[ending], "gote" if loser == cshogi.BLACK else "sente"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outdir", default="data/fixtures/records")
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rng = random.Random(a.seed)
    eng = Usi()
    S = cshogi.STARTING_SFEN
    names = ["Fairy-Stockfish d3", "Fairy-Stockfish d4"]

    def game_dict(sfen, moves, end, winner, **kw):
        d = {"sfen": sfen, "moves": moves, "csa_endgame": end, "winner": winner, "names": kw.pop("names", names),
             "plies": len(moves)}
        d.update(kw)
        return d

    # 1. normal game, resignation (engine self-play, 8 random opening plies)
    while True:
        mv, ending, b, times = play(eng, rng, S, 3, 120, 8)
        if ending == "resign" and 40 <= len(mv) <= 120:
            break
    end, win = result_of(b, ending)
    g = game_dict(S, mv, end, win, ending="resignation: the side to move resigns")
    export(a.outdir, "even-resign", g, times=times, kif_sjis=True, ki2=True,
           comments={0: "opening move", 10: "still book-ish"},
           info_lines={i: f"info depth 3 score cp {rng.randint(-300, 300)} nodes 1000 time 12" for i in range(0, len(mv), 7)})

    # 2. normal game ending in checkmate (played on until mate)
    while True:
        mv, ending, b, times = play(eng, rng, S, 2, 160, 10, stop_at_resign=False)
        if ending == "mate" and b.is_check() and 40 <= len(mv) <= 160:
            break
    end, win = result_of(b, ending)
    g = game_dict(S, mv, end, win, ending="checkmate: the last move mates")
    export(a.outdir, "even-mate", g, times=times, ki2=True)

    # 3. normal game ending by sennichite: engine opening, then a quiet 4-ply cycle x3
    sys.path.insert(0, os.path.dirname(__file__))
    import gen_endings
    while True:
        mv, ending, b, _ = play(eng, rng, S, 3, 30, 6)
        if b.is_check():
            continue
        cyc = gen_endings.find_cycle(b, rng, False, False)
        if cyc:
            break
    mv = mv + cyc * 3
    assert gen_endings.judge(S, mv) == "draw repetition"
    g = game_dict(S, mv, "%SENNICHITE", "draw", ending="fourfold repetition (sennichite)")
    export(a.outdir, "even-sennichite", g, ki2=True)

    # 4. time-up, with times and comments on moves
    mv, ending, b, times = play(eng, rng, S, 3, 70, 6)
    mv, times = mv[:min(len(mv), 70)], times[:min(len(mv), 70)]
    b = cshogi.Board(S)
    for u in mv:
        b.push_usi(u)
    loser = "sente" if b.turn == cshogi.BLACK else "gote"
    g = game_dict(S, mv, "%TIME_UP", "gote" if loser == "sente" else "sente",
                  ending=f"time-up: the side to move ({loser}) runs out of time", end_time=61,
                  names=["time trouble", "patient"])
    export(a.outdir, "even-timeup", g, times=times, comments={3: "a comment", 20: "another comment"},
           info_lines={i: f"info depth 3 score cp {rng.randint(-300, 300)} time 900" for i in range(1, len(mv), 10)})

    # 5. illegal move: the side to move makes an illegal move (not recorded), CSA %ILLEGAL_MOVE
    mv, ending, b, times = play(eng, rng, S, 3, 44, 6)
    loser = "sente" if b.turn == cshogi.BLACK else "gote"
    g = game_dict(S, mv, "%ILLEGAL_MOVE", "gote" if loser == "sente" else "sente",
                  ending=f"illegal move by the side to move ({loser}); the illegal move itself is not recorded")
    export(a.outdir, "even-illegal", g, ki2=True)

    # 6/7. handicap games: bishop and 2-piece; the giver (gote, uwate) moves first
    for hname, fname in (("角落ち", "handicap-bishop"), ("二枚落ち", "handicap-2piece")):
        sfen = HANDICAPS[hname]
        while True:
            mv, ending, b, times = play(eng, rng, sfen, 3, 120, 4)
            if ending in ("resign", "mate") and len(mv) >= 30:
                break
        end, win = result_of(b, ending)
        g = game_dict(sfen, mv, end, win, handicap=hname, ending=f"{ending} in a {hname} game",
                      names=["shitate (sente)", "uwate (gote)"])
        export(a.outdir, fname, g, times=times)

    # 8. from a position: the declaration case (king walks in, then %KACHI)
    sfen = "+P+P+P+P1+P+P+P+P/7+R1/1+B7/4K4/9/9/9/9/k8 b 2G2S2N2L2P 1"
    mv = ["5d5c", "9i9h"]
    assert gen_endings.judge(sfen, mv + ["win"]) == "sente declaration"
    g = game_dict(sfen, mv, "%KACHI", "sente", ending="declaration (27-point rule) by sente after 2 plies",
                  names=["declarer", "defender"])
    export(a.outdir, "position-kachi", g)

    # 9. from a midgame position (a random game's position, gote to move), engine plays on
    while True:
        b0 = gen_endings.random_position(rng, 61)
        if b0 is None or b0.turn != cshogi.WHITE:
            continue
        mv, ending, b, times = play(eng, rng, b0.sfen(), 2, 100, 0, stop_at_resign=False)
        if ending == "mate" and 10 <= len(mv):
            break
    end, win = result_of(b, ending)
    g = game_dict(b0.sfen(), mv, end, win, ending="checkmate, from a position with pieces in hand, gote to move")
    export(a.outdir, "position-mate", g, times=times)
    eng.close()


if __name__ == "__main__":
    main()
