//! `koma convert-samples`: koma's sample chunks (self-play, `koma gen`) to dlshogi's
//! hcpe3, for other trainers. Each sample is a one-move game from its position
//! ([`dataio::hcpe::sample_game`]): the policy target as candidate visit counts (out of
//! 10000; none for a cheap search's sample, which trains no policy), the search value as
//! the eval (dlshogi's logistic scale, 756 per unit) and the game's result. All inputs go
//! into the one output file, written atomically and only when some sample converted, never
//! over an input. A chunk or sample that does not convert is named on stderr (each line
//! names its chunk once) and the run goes on.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use dataio::hcpe::HcpeFault;
use dataio::{read_chunk, Sample, CHUNK_EXTENSION};
use koma_net::{files_under, BadInput, InputFiles};
use model::encoding::Encoder;
use nn::EncoderLabels;
use rules::records::hcpe::hcpe3;
use rules::Variant;

#[derive(Args)]
pub struct ConvertSamplesArgs {
    /// Sample chunk files or folders (searched recursively for .chunk files).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The hcpe3 file to write.
    #[arg(short, long)]
    output: PathBuf,
}

/// Counts of a conversion to hcpe3.
#[derive(Default, Debug)]
pub struct SamplesTally {
    pub files: usize,
    pub samples: usize,
    /// Chunks that could not be read, and samples that did not convert.
    pub errors: usize,
}

/// Sample chunks under `inputs` to one hcpe3 file, written when some sample converted.
pub fn chunks_to_hcpe3(inputs: &[PathBuf], output: &Path) -> Result<SamplesTally> {
    let mut tally = SamplesTally::default();
    let encoder = Encoder::new(Variant::Shogi);
    let mut games = Vec::new();
    for path in files_under(inputs, |ext| ext == CHUNK_EXTENSION) {
        tally.files += 1;
        let chunk = match read_chunk(&path, &EncoderLabels) {
            Ok(c) if c.header.variant == Variant::Shogi => c,
            Ok(c) => {
                let why = format!("{}: a {} chunk; hcpe3 holds standard shogi", path.display(), c.header.variant);
                report(&why, &mut tally);
                continue;
            }
            // The chunk's errors name it.
            Err(e) => {
                report(&e.to_string(), &mut tally);
                continue;
            }
        };
        let mut faults = Vec::new();
        for (i, s) in chunk.samples.iter().enumerate() {
            match sample_game(s, &encoder) {
                Ok(g) => games.push(g),
                Err(why) => faults.push((i, why)),
            }
        }
        if let Some((first, why)) = faults.first() {
            let (n, of) = (faults.len(), chunk.samples.len());
            let others = if n > 1 { format!(" (the first of {n} of its {of} samples)") } else { String::new() };
            report(&format!("{}: sample #{first} not converted{others}: {why}", path.display()), &mut tally);
            tally.errors += n - 1;
        }
    }
    tally.samples = games.len();
    if games.is_empty() {
        report(&format!("no sample converted: {} not written", output.display()), &mut tally);
    } else {
        hcpe3::save(output, &games).with_context(|| format!("writing {}", output.display()))?;
    }
    Ok(tally)
}

/// One sample as a one-move hcpe3 game, its labels read by `encoder`.
pub fn sample_game(s: &Sample, encoder: &Encoder) -> Result<hcpe3::Game, HcpeFault> {
    dataio::hcpe::sample_game(s, |pos, label, legal| encoder.index_move_among(pos, label as usize, legal))
}

fn report(line: &str, tally: &mut SamplesTally) {
    tally.errors += 1;
    eprintln!("{line}");
}

/// Runs `koma convert-samples`.
pub fn convert_samples(args: ConvertSamplesArgs) -> Result<ExitCode> {
    if args.output.extension().and_then(|e| e.to_str()) != Some("hcpe3") {
        return Err(BadInput(format!("-o {}: the output is an .hcpe3 file", args.output.display())).into());
    }
    let read = files_under(&args.inputs, |ext| ext == CHUNK_EXTENSION);
    if InputFiles::new(read.iter().map(PathBuf::as_path)).contains(&args.output) {
        return Err(BadInput(format!("-o {}: that is an input; write to another file", args.output.display())).into());
    }
    let tally = chunks_to_hcpe3(&args.inputs, &args.output)?;
    eprintln!("files {}, samples {}, errors {} -> {}", tally.files, tally.samples, tally.errors, args.output.display());
    Ok(if tally.errors > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}
