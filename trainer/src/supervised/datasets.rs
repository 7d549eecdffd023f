//! What `koma learn` trains on, whatever its form: koma's sample chunks (self-play or
//! `koma gen` teacher data), dlshogi's `hcpe` and `hcpe3` files (cshogi's formats; Floodgate
//! and YaneuraOu data converted by cshogi), and game records (KIF, KI2, CSA, USI).
//!
//! Every input becomes groups of samples; a group is the unit the validation split holds
//! out (a game, a chunk, or a run of [`HCPE_GROUP`] hcpe records, which carry no game
//! boundaries).

use std::path::{Path, PathBuf};

use files::files_under;

use model::encoding::{Encoder, ENCODER_VERSION};
use rules::records::hcpe::{self, hcpe3};
use rules::{Color, Position, Variant};
use selfplay::samples::{read_chunk_expect, GameResult, Sample, CHUNK_EXTENSION};

use arena::player::EngineScore;

use super::records::read_record_samples;
use super::teacher::score_wdl;

/// hcpe records per validation group.
pub const HCPE_GROUP: usize = 256;

/// Centipawns per logistic unit when an hcpe eval becomes a win probability (dlshogi's
/// `eval_coef` default).
pub const HCPE_EVAL_SCALE: f64 = 756.0;

/// The inputs `koma learn` found: sample groups and the problems met (a file that could
/// not be read, a record that does not replay). Problems never stop the reading.
#[derive(Default)]
pub struct TrainingInputs {
    pub groups: Vec<Vec<Sample>>,
    pub problems: Vec<String>,
    /// Input files read, by kind: chunks, hcpe, hcpe3, records.
    pub files: [usize; 4],
}

/// Reads every input under `paths` (files, or folders searched recursively).
pub fn read_training_inputs(paths: &[PathBuf], variant: Variant, encoder: &Encoder) -> TrainingInputs {
    let mut inputs = TrainingInputs::default();
    let mut records = Vec::new();
    for file in input_files(paths) {
        match extension(&file).as_str() {
            e if e == CHUNK_EXTENSION => read_chunk_file(&file, variant, &mut inputs),
            "hcpe" => read_hcpe_file(&file, encoder, &mut inputs),
            "hcpe3" => read_hcpe3_file(&file, encoder, &mut inputs),
            _ => records.push(file),
        }
    }
    if !records.is_empty() {
        inputs.files[3] += records.len();
        let (games, problems) = read_record_samples(&records, encoder);
        inputs.groups.extend(games);
        inputs.problems.extend(problems);
    }
    inputs
}

fn extension(path: &Path) -> String {
    path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase()
}

/// The files under `paths`, sorted per folder; in folders only the kinds `koma learn` reads.
fn input_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    const KNOWN: [&str; 10] = ["chunk", "hcpe", "hcpe3", "usi", "sfen", "kif", "kifu", "ki2", "ki2u", "csa"];
    files_under(paths, |file| KNOWN.contains(&extension(file).as_str()))
}

fn read_chunk_file(path: &Path, variant: Variant, inputs: &mut TrainingInputs) {
    inputs.files[0] += 1;
    match read_chunk_expect(path, variant, ENCODER_VERSION) {
        Ok(chunk) if !chunk.samples.is_empty() => inputs.groups.push(chunk.samples),
        Ok(_) => {}
        Err(e) => inputs.problems.push(e.to_string()),
    }
}

fn read_hcpe_file(path: &Path, encoder: &Encoder, inputs: &mut TrainingInputs) {
    inputs.files[1] += 1;
    let reader = match hcpe::Reader::open(path) {
        Ok(r) => r,
        Err(e) => return inputs.problems.push(e.to_string()),
    };
    let mut group = Vec::with_capacity(HCPE_GROUP);
    for entry in reader {
        match entry {
            Ok(e) => {
                let policy = vec![(encoder.move_index(&e.position, e.best_move) as u32, 1.0)];
                group.push(scored_sample(&e.position, policy, e.eval, e.result.winner(), 0));
                if group.len() == HCPE_GROUP {
                    inputs.groups.push(std::mem::take(&mut group));
                }
            }
            Err(err) => inputs.problems.push(format!("{}: {err}", path.display())),
        }
    }
    if !group.is_empty() {
        inputs.groups.push(group);
    }
}

fn read_hcpe3_file(path: &Path, encoder: &Encoder, inputs: &mut TrainingInputs) {
    inputs.files[2] += 1;
    let reader = match hcpe3::Reader::open(path) {
        Ok(r) => r,
        Err(e) => return inputs.problems.push(e.to_string()),
    };
    for game in reader {
        match game {
            Ok(g) => inputs.groups.push(hcpe3_samples(&g, encoder)),
            Err(err) => inputs.problems.push(format!("{}: {err}", path.display())),
        }
    }
}

/// The samples of an hcpe3 game: the policy target is the visit distribution of the
/// candidates (the move played when there are none).
pub fn hcpe3_samples(game: &hcpe3::Game, encoder: &Encoder) -> Vec<Sample> {
    let total = game.moves.len() as u32;
    let winner = game.result.winner();
    let mut out = Vec::with_capacity(game.moves.len());
    let mut ply = 0u32;
    game.replay(|pos, m| {
        let visits: u32 = m.candidates.iter().map(|&(_, v)| v as u32).sum();
        let policy = if visits == 0 {
            vec![(encoder.move_index(pos, m.mv) as u32, 1.0)]
        } else {
            m.candidates
                .iter()
                .filter(|&&(_, v)| v > 0)
                .map(|&(mv, v)| (encoder.move_index(pos, mv) as u32, v as f32 / visits as f32))
                .collect()
        };
        out.push(scored_sample(pos, policy, m.eval, winner, total - ply));
        ply += 1;
    });
    out
}

/// A sample whose value target mixes the result with the eval (side to move's view).
fn scored_sample(pos: &Position, policy: Vec<(u32, f32)>, eval: i16, winner: Option<Color>, plies_left: u32) -> Sample {
    let result = GameResult::for_side(winner, pos.side_to_move());
    Sample {
        sfen: pos.to_sfen(),
        repetitions: pos.repetitions().min(255) as u8,
        policy,
        result: Some(result),
        root_wdl: score_wdl(EngineScore::Cp(eval as i32), HCPE_EVAL_SCALE),
        plies_left,
        full_search: true,
    }
}
