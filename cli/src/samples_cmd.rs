//! `koma convert-samples`: koma's sample chunks (self-play, `koma gen`) to dlshogi's
//! hcpe3, for other trainers. Each sample is a one-move game from its position: the
//! policy target as candidate visit counts (out of 10000), the search value as the eval
//! (dlshogi's logistic scale, 756 per unit) and the game's result. All inputs go into the
//! one output file, written atomically.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use koma_cli::{files_under, BadInput};
use model::encoding::Encoder;
use rules::records::hcpe::{hcpe3, GameResult as HcpeResult};
use rules::Variant;
use selfplay::samples::{read_chunk, GameResult, Sample, CHUNK_EXTENSION};

#[derive(Args)]
pub struct ConvertSamplesArgs {
    /// Sample chunk files or folders (searched recursively for .chunk files).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The hcpe3 file to write.
    #[arg(short, long)]
    output: PathBuf,
}

/// Visits the policy of a sample is scaled to.
const VISITS: f32 = 10000.0;
/// dlshogi's `eval_coef`: centipawns per logistic unit.
const EVAL_SCALE: f64 = 756.0;

/// Sample chunks under `inputs` to one hcpe3 file.
pub fn chunks_to_hcpe3(inputs: &[PathBuf], output: &Path) -> Result<(usize, usize, usize)> {
    let (mut files, mut errors) = (0, 0);
    let encoder = Encoder::new(Variant::Shogi);
    let mut games = Vec::new();
    for path in files_under(inputs, |ext| ext == CHUNK_EXTENSION) {
        files += 1;
        let chunk = match read_chunk(&path) {
            Ok(c) if c.header.variant == Variant::Shogi => c,
            Ok(c) => {
                report(&path, &format!("a {} chunk; hcpe3 holds standard shogi", c.header.variant), &mut errors);
                continue;
            }
            Err(e) => {
                report(&path, &e.to_string(), &mut errors);
                continue;
            }
        };
        for (i, s) in chunk.samples.iter().enumerate() {
            match sample_game(s, &encoder) {
                Ok(g) => games.push(g),
                Err(why) => report(&path, &format!("sample {i}: {why}"), &mut errors),
            }
        }
    }
    hcpe3::save(output, &games).with_context(|| format!("writing {}", output.display()))?;
    Ok((files, games.len(), errors))
}

/// One sample as a one-move hcpe3 game.
pub fn sample_game(s: &Sample, encoder: &Encoder) -> Result<hcpe3::Game, String> {
    let pos = s.position(Variant::Shogi).map_err(|e| e.to_string())?;
    let legal = pos.legal_moves();
    let mut candidates = Vec::with_capacity(s.policy.len());
    for &(label, p) in &s.policy {
        let mv = encoder
            .index_move_among(&pos, label as usize, &legal)
            .ok_or_else(|| format!("policy label {label} is not a legal move of {}", s.sfen))?;
        let visits = (p * VISITS).round() as u16;
        if visits > 0 {
            candidates.push((mv, visits));
        }
    }
    let mv = candidates.iter().max_by_key(|c| c.1).map(|c| c.0).ok_or("an empty policy target")?;
    let side = pos.side_to_move();
    let winner = match s.result.ok_or("the game's result is unknown (hcpe3 has no such result)")? {
        GameResult::Win => Some(side),
        GameResult::Loss => Some(side.opponent()),
        GameResult::Draw => None,
    };
    Ok(hcpe3::Game {
        start: pos,
        moves: vec![hcpe3::MoveEntry { mv, eval: eval_of(s.root_wdl), candidates }],
        result: HcpeResult::from_winner(winner),
        ending: hcpe3::Ending::Unmarked,
        opponent: hcpe3::Opponent::SelfPlay,
    })
}

/// The search value (win - loss as a score in [0, 1]) on dlshogi's eval scale.
fn eval_of(wdl: [f32; 3]) -> i16 {
    let p = (wdl[0] as f64 + 0.5 * wdl[1] as f64).clamp(1e-4, 1.0 - 1e-4);
    (EVAL_SCALE * (p / (1.0 - p)).ln()).round().clamp(-32000.0, 32000.0) as i16
}

fn report(path: &Path, why: &str, errors: &mut usize) {
    *errors += 1;
    eprintln!("{}: {why}", path.display());
}

/// Runs `koma convert-samples`.
pub fn convert_samples(args: ConvertSamplesArgs) -> Result<ExitCode> {
    if args.output.extension().and_then(|e| e.to_str()) != Some("hcpe3") {
        return Err(BadInput(format!("-o {}: the output is an .hcpe3 file", args.output.display())).into());
    }
    let (files, games, errors) = chunks_to_hcpe3(&args.inputs, &args.output)?;
    eprintln!("files {files}, samples {games}, errors {errors} -> {}", args.output.display());
    Ok(if errors > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}
