//! What `koma learn` trains on, whatever its form: koma's sample chunks (self-play or
//! `koma gen` teacher data), dlshogi's `hcpe` and `hcpe3` files (cshogi's formats; Floodgate
//! and YaneuraOu data converted by cshogi), YaneuraOu's own PackedSfenValue files (`.psv`;
//! its usual `.bin` name is taken for psv when the file is named as an input, not when
//! found in a folder, where `.bin` could be anything), and game records (KIF, KI2, CSA,
//! USI).
//!
//! Every input becomes groups of samples; a group is the unit the validation split holds
//! out (a game, or a run of [`HCPE_GROUP`] hcpe or psv records, which carry no game
//! boundaries). A chunk's games are told apart by their samples' `plies_left`, which
//! counts down by one from move to move within a game. The hcpe, hcpe3 and psv
//! conversions are `dataio::hcpe`'s.

use std::path::{Path, PathBuf};

use files::files_under;

use dataio::hcpe::{hcpe3_samples, hcpe_sample, psv_sample};
use dataio::{read_chunk_expect, Sample, CHUNK_EXTENSION};
use model::encoding::Encoder;
use nn::EncoderLabels;
use rules::records::hcpe::{self, hcpe3};
use rules::records::psv;
use rules::Variant;

use super::records::read_record_samples;

/// hcpe (and psv) records per validation group.
pub const HCPE_GROUP: usize = 256;

/// The inputs `koma learn` found: sample groups and the problems met (a file that could
/// not be read, a record that does not replay). Problems never stop the reading.
#[derive(Default)]
pub struct TrainingInputs {
    pub groups: Vec<Vec<Sample>>,
    pub problems: Vec<String>,
    /// Input files read, by kind: chunks, hcpe, hcpe3, psv, records.
    pub files: [usize; 5],
}

/// Reads every input under `paths` (files, or folders searched recursively).
pub fn read_training_inputs(paths: &[PathBuf], variant: Variant, encoder: &Encoder) -> TrainingInputs {
    let mut inputs = TrainingInputs::default();
    let mut records = Vec::new();
    for file in input_files(paths) {
        let kind = kind_index(&file);
        inputs.files[kind] += 1;
        if variant != Variant::Shogi && kind != CHUNKS {
            // Records, hcpe and psv hold standard shogi: counted by kind (the caller
            // refuses them for another variant), not replayed under the wrong rules.
            continue;
        }
        match kind {
            CHUNKS => read_chunk_file(&file, variant, &mut inputs),
            HCPE => read_hcpe_file(&file, encoder, &mut inputs),
            HCPE3 => read_hcpe3_file(&file, encoder, &mut inputs),
            PSV => read_psv_file(&file, encoder, &mut inputs),
            _ => records.push(file),
        }
    }
    if !records.is_empty() {
        let (games, problems) = read_record_samples(&records, encoder);
        inputs.groups.extend(games);
        inputs.problems.extend(problems);
    }
    inputs
}

// A file's kind: its index in [`TrainingInputs::files`].
const CHUNKS: usize = 0;
const HCPE: usize = 1;
const HCPE3: usize = 2;
const PSV: usize = 3;
const RECORDS: usize = 4;

/// The kind of an input file, by its extension (the one place that maps them).
fn kind_index(path: &Path) -> usize {
    match extension(path).as_str() {
        e if e == CHUNK_EXTENSION => CHUNKS,
        "hcpe" => HCPE,
        "hcpe3" => HCPE3,
        "psv" | "bin" => PSV,
        _ => RECORDS,
    }
}

fn extension(path: &Path) -> String {
    path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase()
}

/// The files under `paths`, sorted per folder; in folders only the kinds `koma learn` reads
/// (not `.bin`: a named `.bin` file is read as psv).
fn input_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    const KNOWN: [&str; 11] = ["chunk", "hcpe", "hcpe3", "psv", "usi", "sfen", "kif", "kifu", "ki2", "ki2u", "csa"];
    files_under(paths, |file| KNOWN.contains(&extension(file).as_str()))
}

fn read_chunk_file(path: &Path, variant: Variant, inputs: &mut TrainingInputs) {
    match read_chunk_expect(path, variant, &EncoderLabels) {
        Ok(chunk) => inputs.groups.extend(games_of(chunk.samples)),
        Err(e) => inputs.problems.push(e.to_string()),
    }
}

/// A chunk's samples cut into games: a new game begins wherever `plies_left` does not
/// count down by one (a game's last sample has at least 1 left, its next game's first more).
/// A ply a game did not record cuts it in two, which only costs the validation a little
/// independence.
fn games_of(samples: Vec<Sample>) -> Vec<Vec<Sample>> {
    let mut games: Vec<Vec<Sample>> = Vec::new();
    for sample in samples {
        match games.last_mut() {
            Some(game) if game.last().is_some_and(|prev| prev.plies_left == sample.plies_left + 1) => game.push(sample),
            _ => games.push(vec![sample]),
        }
    }
    games
}

fn read_hcpe_file(path: &Path, encoder: &Encoder, inputs: &mut TrainingInputs) {
    let sample = |e: &hcpe::Entry| hcpe_sample(e, |pos, mv| encoder.move_index(pos, mv) as u32);
    read_entry_groups(path, hcpe::Reader::open(path), sample, inputs);
}

fn read_psv_file(path: &Path, encoder: &Encoder, inputs: &mut TrainingInputs) {
    let sample = |e: &psv::Entry| psv_sample(e, |pos, mv| encoder.move_index(pos, mv) as u32);
    read_entry_groups(path, psv::Reader::open(path), sample, inputs);
}

/// The entries of an hcpe or psv file (`reader`, opened from `path`) as samples, in
/// groups of [`HCPE_GROUP`].
fn read_entry_groups<R, E, Err>(
    path: &Path,
    reader: Result<R, Err>,
    sample: impl Fn(&E) -> Sample,
    inputs: &mut TrainingInputs,
) where
    R: Iterator<Item = Result<E, Err>>,
    Err: std::fmt::Display,
{
    let reader = match reader {
        Ok(r) => r,
        Err(e) => return inputs.problems.push(e.to_string()),
    };
    let mut group = Vec::with_capacity(HCPE_GROUP);
    for entry in reader {
        match entry {
            Ok(e) => {
                group.push(sample(&e));
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
    let reader = match hcpe3::Reader::open(path) {
        Ok(r) => r,
        Err(e) => return inputs.problems.push(e.to_string()),
    };
    for game in reader {
        match game {
            Ok(g) => inputs.groups.push(hcpe3_samples(&g, |pos, mv| encoder.move_index(pos, mv) as u32)),
            Err(err) => inputs.problems.push(format!("{}: {err}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(plies_left: u32) -> Sample {
        Sample {
            sfen: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1".into(),
            repetitions: 0,
            policy: vec![(0, 1.0)],
            result: None,
            root_wdl: [0.0, 1.0, 0.0],
            plies_left,
            full_search: true,
            aux: Default::default(),
        }
    }

    #[test]
    fn a_chunk_is_cut_into_its_games() {
        // A game of five plies, then one of two: its 3 is not the 1's count-down.
        let left = [5, 4, 3, 2, 1, 3, 2];
        let games = games_of(left.iter().map(|&n| sample(n)).collect());
        let lengths: Vec<Vec<u32>> = games.iter().map(|g| g.iter().map(|s| s.plies_left).collect()).collect();
        assert_eq!(lengths, vec![vec![5, 4, 3, 2, 1], vec![3, 2]]);
        let split = games_of([4, 3, 9, 8, 7, 2, 1].iter().map(|&n| sample(n)).collect());
        assert_eq!(split.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 3, 2]);
        assert!(games_of(Vec::new()).is_empty());
    }
}
