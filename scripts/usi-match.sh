#!/usr/bin/env bash
# Games of koma-usi against a Debian USI engine, through cshogi (a real USI client), with
# short time controls. Fails unless every game completes, every koma move is legal, koma
# never thinks past its byoyomi (or runs out of time), and nothing crashes.
#
#   scripts/usi-match.sh [--games N] [--byoyomi MS] [--opponent PATH] [--model CKPT]
#                        [--threads N] [--no-build] [--no-cli]
#
# Defaults: 2 games, byoyomi 500 ms, opponent /usr/games/gpsusi, a tiny untrained
# network written by `koma-usi --init-model` to target/koma-usi-test/match-shogi.json.
# Two parts, each plays --games games (colours alternate):
#  1. a driver on cshogi.usi.Engine that times every move and checks it with cshogi's
#     rules (koma's think time must stay below the byoyomi);
#  2. `python -m cshogi.cli koma-usi OPPONENT --games N --byoyomi MS` (the CLI counts
#     illegal moves and time losses itself), output checked.
# Needs .venv with cshogi (scripts/setup.sh, scripts/install-engines.sh) and the opponent.
set -euo pipefail
cd "$(dirname "$0")/.."

games=2
byoyomi=500
opponent=/usr/games/gpsusi
model=""
threads=2
build=1
cli=1
while [ $# -gt 0 ]; do
    case "$1" in
        --games) games="$2"; shift 2 ;;
        --byoyomi) byoyomi="$2"; shift 2 ;;
        --opponent) opponent="$2"; shift 2 ;;
        --model) model="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --no-build) build=0; shift ;;
        --no-cli) cli=0; shift ;;
        *) echo "usi-match: unknown argument $1" >&2; exit 2 ;;
    esac
done

PY=.venv/bin/python
[ -x "$PY" ] || { echo "usi-match: $PY missing (run scripts/setup.sh)" >&2; exit 2; }
"$PY" -c "import cshogi" 2>/dev/null || { echo "usi-match: cshogi missing in .venv (scripts/install-engines.sh)" >&2; exit 2; }
[ -x "$opponent" ] || { echo "usi-match: opponent $opponent missing (scripts/install-engines.sh)" >&2; exit 2; }

KOMA="${KOMA_USI:-$PWD/target/release/koma-usi}"
if [ "$build" = 1 ]; then
    # shellcheck source=/dev/null
    source scripts/env.sh
    cargo build --release -p koma-usi
fi
[ -x "$KOMA" ] || { echo "usi-match: $KOMA missing (cargo build --release -p koma-usi)" >&2; exit 2; }

if [ -z "$model" ]; then
    mkdir -p target/koma-usi-test
    model="$PWD/target/koma-usi-test/match-shogi.json"
    [ -f "$model" ] || "$KOMA" --init-model "${model%.json}" --variant shogi >/dev/null
fi
case "$model" in /*) ;; *) model="$PWD/$model" ;; esac

echo "usi-match: $KOMA (ModelFile $model, Threads $threads) vs $opponent, $games games, byoyomi $byoyomi ms"

"$PY" - "$KOMA" "$opponent" "$games" "$byoyomi" "$model" "$threads" <<'PYEOF'
import sys, time
from collections import defaultdict
import cshogi
from cshogi.usi import Engine

koma_path, opp_path, games, byoyomi, model, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
MAX_PLIES = 256
failures = []
max_think = 0.0
results = []
koma = Engine(koma_path, connect=False)
opp = Engine(opp_path, connect=False)
for g in range(games):
    engines = [koma, opp] if g % 2 == 0 else [opp, koma]
    for e in engines:
        e.connect()
    koma.setoption("ModelFile", model)
    koma.setoption("Threads", threads)
    for e in engines:
        e.isready()
        e.usinewgame()
    board = cshogi.Board()
    moves = []
    reps = defaultdict(int)
    result = None
    while result is None:
        if board.move_number > MAX_PLIES:
            result = "draw (max plies)"
            break
        idx = (board.move_number - 1) % 2
        e = engines[idx]
        e.position(moves)
        t0 = time.perf_counter()
        bestmove, _ = e.go(byoyomi=byoyomi)
        dt = time.perf_counter() - t0
        who = "koma" if e is koma else "opponent"
        if e is koma:
            max_think = max(max_think, dt)
            if dt * 1000 >= byoyomi:
                failures.append(f"game {g+1} ply {board.move_number}: koma thought {dt*1000:.0f} ms >= byoyomi {byoyomi}")
        if bestmove == "resign":
            result = f"{who} resigned"
            break
        if bestmove == "win":
            if board.is_nyugyoku():
                result = f"{who} declared a win"
            else:
                result = f"{who} declared wrongly"
                if e is koma:
                    failures.append(f"game {g+1}: koma declared without the right")
            break
        mv = board.move_from_usi(bestmove)
        if not board.is_legal(mv):
            result = f"{who} played illegal {bestmove}"
            if e is koma:
                failures.append(f"game {g+1} ply {board.move_number}: koma played illegal {bestmove} in {board.sfen()}")
            break
        board.push(mv)
        moves.append(bestmove)
        reps[board.zobrist_hash()] += 1
        if reps[board.zobrist_hash()] >= 4:
            result = "repetition"
            break
        if board.is_game_over():
            result = f"{who} gave mate"
            break
    for e in engines:
        e.gameover()
        e.quit()
    first = "koma" if engines[0] is koma else "opponent"
    results.append(result)
    print(f"driver game {g+1}: koma {'sente' if first == 'koma' else 'gote'}, {len(moves)} plies, {result}", flush=True)
print(f"driver: {games} games, koma's longest think {max_think*1000:.0f} ms (byoyomi {byoyomi} ms)")
if failures:
    print("driver FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
PYEOF

if [ "$cli" = 1 ]; then
    log=$(mktemp)
    echo "usi-match: $PY -m cshogi.cli $KOMA $opponent --games $games --byoyomi $byoyomi --options1 ModelFile:$model,Threads:$threads"
    "$PY" -m cshogi.cli "$KOMA" "$opponent" --games "$games" --byoyomi "$byoyomi" \
        --options1 "ModelFile:$model,Threads:$threads" | tee "$log"
    "$PY" - "$log" "$games" <<'PYEOF'
import sys
log, games = open(sys.argv[1], encoding="utf-8").read().splitlines(), int(sys.argv[2])
names, finished, bad = None, 0, []
for line in log:
    if line.endswith(" start.") and " vs " in line:
        names = line[: -len(" start.")].split(" vs ")
    elif "games finished" in line:
        finished += 1
    elif ("反則負け" in line or "切れ負け" in line) and names:
        loser = names[0] if "先手の" in line else names[1]
        if loser.startswith("koma-usi"):
            bad.append(line)
if finished != games:
    sys.exit(f"usi-match: FAILED: {finished} of {games} games finished")
if bad:
    sys.exit("usi-match: FAILED: koma lost by an illegal move or on time: " + "; ".join(bad))
print(f"cli: {finished} games finished, no illegal move or time loss by koma")
PYEOF
    rm -f "$log"
fi
echo "usi-match: OK"
