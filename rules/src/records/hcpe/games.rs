//! Game records as hcpe entries, and hcpe entries and hcpe3 games back as game records
//! (`koma convert --to hcpe`, `--from hcpe`, `--from hcpe3`).
//!
//! A record becomes one entry per move: the position before it, the move, eval 0 and the
//! game's result. hcpe keeps no game boundaries, so a game read back is a run of
//! consecutive entries: each entry's position is the one the previous entry's move led
//! to (board, hands and side to move; hcpe keeps no move number) and its result is the
//! same. What hcpe and hcpe3 do not keep is lost: names, times, comments, the move
//! number of the start, evals, and a game without moves; hcpe keeps the winner but not
//! why the game ended, which is read back as [`end_of`] says.

use super::hcpe3::{Ending, Game};
use super::{Entry, GameResult};
use crate::records::{EndReason, GameEnd, Record, RecordError, RecordedMove, Start};
use crate::{EndRules, Position};

/// The hcpe entries of a record: the position before each move, the move, eval 0 and
/// the result (the record's end, else what the rules say of its final position; a draw
/// when neither says).
pub fn entries_of_record(record: &Record) -> Result<Vec<Entry>, RecordError> {
    let final_pos = record.final_position()?;
    let winner = match &record.end {
        Some(end) => end.winner,
        None => final_pos.outcome(&EndRules::default()).and_then(|o| o.winner),
    };
    let result = GameResult::from_winner(winner);
    let mut out = Vec::with_capacity(record.moves.len());
    record.replay(|pos, _, m| out.push(Entry { position: pos.clone(), best_move: m.mv, eval: 0, result }))?;
    Ok(out)
}

/// The games of a run of hcpe entries: a new game starts at each entry that does not
/// continue the one before (another position, or another result).
pub fn records_of_entries(entries: &[Entry]) -> Vec<Record> {
    let mut records = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        let (first, mut pos) = (&entries[i], entries[i].position.clone());
        let mut record = Record::new(Start::from_position(&pos));
        while let Some(e) = entries.get(i).filter(|e| e.position == pos && e.result == first.result) {
            record.moves.push(RecordedMove::new(e.best_move));
            pos.play(e.best_move);
            i += 1;
        }
        record.end = end_of(first.result, Ending::Unmarked, &pos);
        records.push(record);
    }
    records
}

/// An hcpe3 game as a record: its start, its moves, and its end (see [`end_of`]).
pub fn record_of_game(game: &Game) -> Record {
    let mut record = Record::new(Start::from_position(&game.start));
    record.moves = game.moves.iter().map(|m| RecordedMove::new(m.mv)).collect();
    record.end = end_of(game.result, game.ending, &game.replay(|_, _| {}));
    record
}

/// How a game with `result` (and hcpe3's `ending` flag) ended at `pos`, as a record
/// says it: the end the board shows (mate, repetition, a declaration) or the flag names,
/// where it gives the same winner; else, for a win, the loser resigned (or, when the
/// winner is to move, lost by a foul: the one record end where the side that just moved
/// loses); for a draw the board does not show, no end (hcpe writes a game without a
/// result as a draw), or an explicit draw where the board would name a winner.
pub fn end_of(result: GameResult, ending: Ending, pos: &Position) -> Option<GameEnd> {
    let winner = result.winner();
    let flagged = match ending {
        Ending::Unmarked => None,
        Ending::Repetition => Some(GameEnd::at(EndReason::Repetition, pos)),
        Ending::Declaration => Some(GameEnd::at(EndReason::Declaration, pos)),
        Ending::MaxMoves => Some(GameEnd::at(EndReason::MaxMoves, pos)),
    };
    let outcome = pos.outcome(&EndRules::default());
    let shown = outcome.and_then(GameEnd::from_outcome);
    if let Some(end) = flagged.into_iter().chain(shown).find(|e| e.winner == winner) {
        return Some(end);
    }
    let to_move = pos.side_to_move();
    match winner {
        Some(w) if w != to_move => Some(GameEnd::at(EndReason::Resign, pos)),
        Some(_) if pos.can_declare() => Some(GameEnd::at(EndReason::Declaration, pos)),
        Some(w) => Some(GameEnd { winner: Some(w), ..GameEnd::at(EndReason::IllegalMove, pos) }),
        None if outcome.is_some() => Some(GameEnd::at(EndReason::Draw, pos)),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::read_usi_games;

    fn entries(text: &str) -> Vec<Entry> {
        read_usi_games(text).unwrap().iter().flat_map(|r| entries_of_record(r).unwrap()).collect()
    }

    #[test]
    fn games_are_runs_of_consecutive_positions() {
        let text = "startpos moves 7g7f 3c3d 8h2b+\nstartpos moves 2g2f 8c8d\nstartpos moves 2g2f\n";
        let games = records_of_entries(&entries(text));
        let moves: Vec<Vec<String>> = games.iter().map(Record::usi_moves).collect();
        assert_eq!(moves, [vec!["7g7f", "3c3d", "8h2b+"], vec!["2g2f", "8c8d"], vec!["2g2f"]]);
        // No result in a USI record: a draw, which reads back as no end.
        assert!(games.iter().all(|g| g.end.is_none() && g.start == Start::Even));
    }

    #[test]
    fn the_winner_comes_back_with_an_end_that_names_it() {
        let mut record = read_usi_games("startpos moves 7g7f 3c3d\n").unwrap().remove(0);
        let pos = record.final_position().unwrap();
        for (reason, winner) in [(EndReason::Resign, crate::Color::Gote), (EndReason::IllegalMove, crate::Color::Sente)]
        {
            record.end = Some(GameEnd { winner: Some(winner), ..GameEnd::at(reason, &pos) });
            let back = records_of_entries(&entries_of_record(&record).unwrap());
            assert_eq!(back.len(), 1);
            assert_eq!(back[0].moves, record.moves);
            assert_eq!(back[0].end.as_ref().map(|e| (e.reason, e.winner)), Some((reason, Some(winner))));
        }
    }

    #[test]
    fn a_mate_reads_back_as_a_mate() {
        let record = read_usi_games("sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1 moves G*5b\n").unwrap().remove(0);
        let back = records_of_entries(&entries_of_record(&record).unwrap());
        assert_eq!(back[0].usi_moves(), ["G*5b"]);
        let end = back[0].end.as_ref().unwrap();
        assert_eq!((end.reason, end.winner), (EndReason::Checkmate, Some(crate::Color::Sente)));
    }
}
