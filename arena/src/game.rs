//! One game between two players, adjudicated by the rules: mate, no moves, repetition,
//! perpetual check, declaration, impasse, royal capture, bare king, maximum length. A
//! player that resigns, declares falsely, plays an illegal move, runs out of time, hangs,
//! crashes or breaks the protocol loses, with the reason recorded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rules::{Color, EndCause, EndRules, Move, Position, Reason};

use crate::player::{Action, Clocks, EngineScore, Fault, GoRequest, Player, PlayerResult, TimeControl};
use dataio::Opening;

/// Settings of one game.
#[derive(Clone, Copy, Debug)]
pub struct GameSettings {
    /// The match's time control.
    pub tc: TimeControl,
    /// The limit each side moves under, indexed by colour (its own fixed nodes/depth or
    /// the match's time control).
    pub limits: [TimeControl; 2],
    pub end_rules: EndRules,
    /// Grace added to a clock before a late answer loses on time.
    pub time_margin: Duration,
    /// How long a player without a clock may be silent before it is declared hung (an
    /// engine that answers nothing by then; a move that comes later is still played).
    pub hang_timeout: Duration,
}

/// A finished game: how it ended, its moves and times.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// `None`: a draw.
    pub winner: Option<Color>,
    /// The rules' reason, a resignation or a fault; [`EndCause::Stopped`] for a game
    /// stopped before its end ([`play_game_until`]), which has no result.
    pub reason: EndCause,
    /// More about a fault (the engine's text, the error).
    pub detail: Option<String>,
    /// Every move from the opening's base position, the opening's first.
    pub moves: Vec<Move>,
    pub opening_plies: usize,
    /// Milliseconds each game move took (after the opening).
    pub times_ms: Vec<u64>,
    /// The score each game move's player reported (after the opening), mover's view.
    pub scores: Vec<Option<EngineScore>>,
    /// The side whose player failed (its player object should be replaced).
    pub faulty: Option<Color>,
    /// The final position.
    pub final_pos: Position,
}

impl GameRecord {
    /// Whether the game was stopped before its end (no result).
    pub fn stopped(&self) -> bool {
        self.reason == EndCause::Stopped
    }

    /// A game lost by `side`'s player before its first move (it could not be started).
    pub fn fault_before_start(opening: &Opening, side: Color, reason: EndCause, detail: String) -> GameRecord {
        GameRecord {
            winner: Some(side.opponent()),
            reason,
            detail: Some(detail),
            moves: opening.moves.clone(),
            opening_plies: opening.moves.len(),
            times_ms: Vec::new(),
            scores: Vec::new(),
            faulty: Some(side),
            final_pos: opening.position(),
        }
    }
}

fn fault_reason(f: &Fault, clocked: bool) -> EndCause {
    match f {
        Fault::Illegal { .. } => EndCause::IllegalMove,
        Fault::Timeout if clocked => EndCause::Time,
        Fault::Timeout => EndCause::Hang,
        Fault::Crash(_) => EndCause::Crash,
        Fault::Protocol(_) => EndCause::ProtocolError,
        Fault::FalseClaim(_) => EndCause::FalseClaim,
    }
}

/// Plays `opening` to the end: `players[0]` is sente, `players[1]` gote.
pub fn play_game(players: [&mut dyn Player; 2], opening: &Opening, s: &GameSettings) -> GameRecord {
    play_game_until(players, opening, s, &AtomicBool::new(false))
}

/// [`play_game`] that ends as `stopped` (no result) before the next move once `stop` is
/// set: a signal ends a match within a move.
pub fn play_game_until(
    players: [&mut dyn Player; 2],
    opening: &Opening,
    s: &GameSettings,
    stop: &AtomicBool,
) -> GameRecord {
    let [sente, gote] = players;
    let players: [&mut dyn Player; 2] = [sente, gote];
    let start = opening.base.clone();
    let mut pos = opening.position();
    let mut moves: Vec<Move> = opening.moves.clone();
    let mut times_ms = Vec::new();
    let mut scores = Vec::new();
    let end = |winner: Option<Color>, reason: EndCause, detail: Option<String>, faulty: Option<Color>| {
        (winner, reason, detail, faulty)
    };

    let mut finish = None;
    for c in Color::BOTH {
        if let Err(f) = players[c.index()].new_game(&start) {
            finish = Some(end(Some(c.opponent()), fault_reason(&f, false), Some(f.to_string()), Some(c)));
            break;
        }
    }
    let (base_ms, byoyomi_ms, inc_ms) = match s.tc {
        TimeControl::Byoyomi { ms } => (0, ms, 0),
        TimeControl::Fischer { base_ms, inc_ms } => (base_ms, 0, inc_ms),
        _ => (0, 0, 0),
    };
    let mut remaining = [base_ms; 2];

    let (winner, reason, detail, faulty) = loop {
        if let Some(f) = finish.take() {
            break f;
        }
        if stop.load(Ordering::SeqCst) {
            break end(None, EndCause::Stopped, None, None);
        }
        if let Some(o) = pos.outcome(&s.end_rules) {
            break end(o.winner, EndCause::Rules(o.reason), None, None);
        }
        let side = pos.side_to_move();
        let limit = s.limits[side.index()];
        let clocked = limit.has_clock();
        let allowed = if clocked {
            Duration::from_millis(remaining[side.index()] + byoyomi_ms) + s.time_margin
        } else {
            s.hang_timeout
        };
        let started = Instant::now();
        let req = GoRequest {
            pos: &pos,
            start: &start,
            moves: &moves,
            limit,
            clocks: clocked.then_some(Clocks { remaining_ms: remaining, byoyomi_ms, inc_ms }),
            deadline: started + allowed,
            end_rules: s.end_rules,
        };
        let answer = players[side.index()].go(&req);
        let elapsed = started.elapsed();
        let answer = match answer {
            // A move without a clock that did come is played, however late: its limit
            // (nodes, depth) is what the machine's load cannot change, and a player that
            // stops answering fails inside `go` at the deadline (an engine's process) or
            // never returns (a search in this process), so lateness alone is no hang.
            Ok(a) if clocked && elapsed > allowed => {
                Err((Fault::Timeout, format!("answered after {} ms", elapsed.as_millis()), a))
            }
            Ok(a) => Ok(a),
            Err(f) => {
                let d = f.to_string();
                break end(Some(side.opponent()), fault_reason(&f, clocked), Some(d), Some(side));
            }
        };
        let action = match answer {
            Ok(a) => a,
            Err((f, d, _)) => break end(Some(side.opponent()), fault_reason(&f, clocked), Some(d), Some(side)),
        };
        if clocked {
            let ms = elapsed.as_millis() as u64;
            let r = &mut remaining[side.index()];
            *r = r.saturating_sub(ms);
            if matches!(s.tc, TimeControl::Fischer { .. }) {
                *r += inc_ms;
            }
        }
        match action {
            Action::Resign => break end(Some(side.opponent()), EndCause::Resign, None, None),
            // Judged by the match's entering king rule: a win, a draw (the 24-point
            // declaration with 24 to 30 points) or a false declaration, which loses.
            Action::Declare => match pos.declaration(s.end_rules.impasse) {
                Some(o) => break end(o.winner, EndCause::Rules(Reason::Declaration), None, None),
                None => break end(Some(side.opponent()), EndCause::FalseDeclaration, None, None),
            },
            Action::Move(mv) => {
                if !pos.is_legal(mv) {
                    break end(Some(side.opponent()), EndCause::IllegalMove, Some(mv.to_usi()), Some(side));
                }
                pos.play(mv);
                moves.push(mv);
                times_ms.push(elapsed.as_millis() as u64);
                scores.push(players[side.index()].last_score());
            }
        }
    };
    for c in Color::BOTH {
        if faulty == Some(c) {
            continue;
        }
        let r = match winner {
            None => PlayerResult::Draw,
            Some(w) if w == c => PlayerResult::Win,
            Some(_) => PlayerResult::Loss,
        };
        players[c.index()].game_over(r);
    }
    GameRecord {
        winner,
        reason,
        detail,
        moves,
        opening_plies: opening.moves.len(),
        times_ms,
        scores,
        faulty,
        final_pos: pos,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    /// Plays its first legal move after `delay`.
    struct Slow {
        delay: Duration,
    }

    impl Player for Slow {
        fn new_game(&mut self, _start: &Position) -> Result<(), Fault> {
            Ok(())
        }

        fn go(&mut self, req: &GoRequest<'_>) -> Result<Action, Fault> {
            std::thread::sleep(self.delay);
            Ok(Action::Move(req.pos.legal_moves()[0]))
        }
    }

    fn slow_game(tc: TimeControl) -> GameRecord {
        let base = Position::startpos(Variant::Shogi);
        let opening = Opening { text: "startpos".into(), base, moves: Vec::new() };
        let settings = GameSettings {
            tc,
            limits: [tc; 2],
            end_rules: EndRules { max_plies: Some(2), ..EndRules::default() },
            time_margin: Duration::ZERO,
            hang_timeout: Duration::from_millis(20),
        };
        let (mut a, mut b) = (Slow { delay: Duration::from_millis(60) }, Slow { delay: Duration::from_millis(60) });
        play_game([&mut a, &mut b], &opening, &settings)
    }

    /// At fixed nodes, a move that comes after the hang timeout is played (a loaded
    /// machine must not change a fixed-node match); under a clock it loses on time.
    #[test]
    fn a_late_move_loses_only_under_a_clock() {
        let unclocked = slow_game(TimeControl::Nodes(800));
        assert_eq!((unclocked.reason, unclocked.moves.len()), (EndCause::Rules(Reason::MaxMoves), 2));
        let clocked = slow_game(TimeControl::Byoyomi { ms: 10 });
        assert_eq!((clocked.reason, clocked.winner, clocked.moves.len()), (EndCause::Time, Some(Color::Gote), 0));
    }
}
