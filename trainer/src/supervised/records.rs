//! Game records (USI move lists, KIF/KI2, CSA) as samples: every position before a
//! recorded move is a sample whose policy target is the move played and whose value
//! target is the game's result from that position's side to move (from the record's
//! end, else the rules' verdict on the final position; unknown: no value target).

use std::path::PathBuf;

use dataio::{GameResult, Sample};
use files::files_under;
use model::encoding::Encoder;
use progress::Reporter;
use rules::records::{read_games, EndReason, Format, Record, RecordError};
use rules::{Color, EndRules};

/// The game records under `paths` (in folders, the formats that can be read).
fn record_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    files_under(paths, |file| {
        file.extension().and_then(|x| x.to_str()).and_then(Format::from_extension).is_some_and(|f| f.readable())
    })
}

/// How the game of `record` ended: `Some(winner)` (`Some(None)`: a draw), or `None` when
/// the result is unknown: the record gives none (an aborted game, a record without an
/// end) and the rules' verdict on its final position is none either.
pub fn record_result(record: &Record, final_pos: &rules::Position) -> Option<Option<Color>> {
    if let Some(end) = &record.end {
        let draw =
            matches!(end.reason, EndReason::Repetition | EndReason::Impasse | EndReason::MaxMoves | EndReason::Draw);
        if end.winner.is_some() || draw {
            return Some(end.winner);
        }
    }
    final_pos.outcome(&EndRules::default()).map(|o| o.winner)
}

/// Samples of one record (positions before each move).
pub fn record_samples(record: &Record, encoder: &Encoder) -> Result<Vec<Sample>, RecordError> {
    let final_pos = record.final_position()?;
    let outcome = record_result(record, &final_pos);
    let total = record.moves.len() as u32;
    let mut out = Vec::with_capacity(record.moves.len());
    record.replay(|pos, i, m| {
        // The value target from the view of the side to move at the sample.
        let result = outcome.map(|winner| GameResult::for_side(winner, pos.side_to_move()));
        out.push(Sample {
            sfen: pos.to_sfen(),
            repetitions: pos.repetitions().min(255) as u8,
            policy: vec![(encoder.move_index(pos, m.mv) as u32, 1.0)],
            result,
            // No search: the result stands in for its value (unknown: masked anyway).
            root_wdl: result.map_or([0.0, 1.0, 0.0], GameResult::wdl),
            plies_left: total - i as u32,
            full_search: true,
            aux: dataio::AuxTargets::default(),
        });
    })?;
    Ok(out)
}

/// Reads the records of `paths`: (samples per game, problems).
pub fn read_record_samples(paths: &[PathBuf], encoder: &Encoder) -> (Vec<Vec<Sample>>, Vec<String>) {
    read_record_samples_shown(paths, encoder, false)
}

/// [`read_record_samples`] with a progress bar over the files when `show`.
pub fn read_record_samples_shown(paths: &[PathBuf], encoder: &Encoder, show: bool) -> (Vec<Vec<Sample>>, Vec<String>) {
    let mut games = Vec::new();
    let mut problems = Vec::new();
    let files = record_files(paths);
    let reading = Reporter::shown_if(show, "learn: reading records", Some(files.len() as u64), "files");
    for f in files {
        reading.inc(1);
        reading.set_message(format!("{} games", games.len()));
        let ext = f.extension().and_then(|x| x.to_str()).unwrap_or("");
        let Some(format) = Format::from_extension(ext).filter(|f| f.readable()) else {
            problems.push(format!("{}: unknown record format (use .usi, .sfen, .kif, .kifu, .ki2, .csa)", f.display()));
            continue;
        };
        let bytes = match std::fs::read(&f) {
            Ok(b) => b,
            Err(e) => {
                problems.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        match read_games(format, &bytes, Format::encoding_of_extension(ext)) {
            Ok(records) => {
                for (i, r) in records.iter().enumerate() {
                    match record_samples(r, encoder) {
                        Ok(s) if !s.is_empty() => games.push(s),
                        Ok(_) => {}
                        Err(e) => problems.push(format!("{} game {}: {e}", f.display(), i + 1)),
                    }
                }
            }
            Err(e) => problems.push(format!("{}: {e}", f.display())),
        }
    }
    reading.set_message(format!("{} games", games.len()));
    reading.finish();
    (games, problems)
}
