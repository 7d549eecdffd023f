//! `koma convert-samples`: koma's sample chunks (self-play, `koma gen`) to dlshogi's
//! hcpe3, for other trainers. Each sample is a one-move game from its position
//! ([`dataio::hcpe::sample_game`]): the policy target as candidate visit counts (out of
//! 10000), the search value as the eval (dlshogi's logistic scale, 756 per unit) and the
//! game's result. All inputs go into the one output file, written atomically.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use dataio::hcpe::HcpeFault;
use dataio::{read_chunk, Sample, CHUNK_EXTENSION};
use koma_cli::{files_under, BadInput};
use model::encoding::Encoder;
use rules::records::hcpe::hcpe3;
use rules::Variant;
use selfplay::EncoderLabels;

#[derive(Args)]
pub struct ConvertSamplesArgs {
    /// Sample chunk files or folders (searched recursively for .chunk files).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The hcpe3 file to write.
    #[arg(short, long)]
    output: PathBuf,
}

/// Sample chunks under `inputs` to one hcpe3 file.
pub fn chunks_to_hcpe3(inputs: &[PathBuf], output: &Path) -> Result<(usize, usize, usize)> {
    let (mut files, mut errors) = (0, 0);
    let encoder = Encoder::new(Variant::Shogi);
    let mut games = Vec::new();
    for path in files_under(inputs, |ext| ext == CHUNK_EXTENSION) {
        files += 1;
        let chunk = match read_chunk(&path, &EncoderLabels) {
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

/// One sample as a one-move hcpe3 game, its labels read by `encoder`.
pub fn sample_game(s: &Sample, encoder: &Encoder) -> Result<hcpe3::Game, HcpeFault> {
    dataio::hcpe::sample_game(s, |pos, label, legal| encoder.index_move_among(pos, label as usize, legal))
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
