//! `koma-usi`: the engine binary. A GUI starts it with no arguments and talks USI;
//! `koma-usi --xboard` (or a first command `xboard`) talks XBoard protocol 2.
//!
//! `koma-usi --init-model STEM [--variant shogi|sho|dai] [--blocks N] [--channels N]
//! [--seed N]` writes a freshly initialised (untrained) network as a checkpoint, for
//! tests and smoke runs (`STEM.json` + `STEM.safetensors`), by the same code as
//! `koma init`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use usi::input::{read_line, Line};
use usi::ProtocolOutput;

#[derive(Parser)]
#[command(
    name = "koma-usi",
    about = "koma's shogi engine: USI on stdin/stdout (standard, sho and dai shogi); XBoard protocol 2 \
             for sho and dai shogi",
    after_help = "Engine options are set through the protocol (USI setoption, XBoard option); see the \
                  README section \"Playing in a GUI\".",
    disable_version_flag = true
)]
struct Args {
    /// Talk XBoard protocol 2 (without it, a first command `xboard` also switches).
    #[arg(long, conflicts_with_all = ["usi", "init_model"])]
    xboard: bool,
    /// Talk USI (the default).
    #[arg(long, conflicts_with = "init_model")]
    usi: bool,
    /// Write an untrained network checkpoint (STEM.json, STEM.safetensors) and exit.
    #[arg(long, value_name = "STEM")]
    init_model: Option<PathBuf>,
    /// Variant of the network --init-model writes: shogi, sho or dai.
    #[arg(long, default_value = "shogi", requires = "init_model")]
    variant: rules::Variant,
    /// Residual blocks of the network --init-model writes.
    #[arg(long, default_value_t = 1, requires = "init_model")]
    blocks: usize,
    /// Channels of the network --init-model writes.
    #[arg(long, default_value_t = 16, requires = "init_model")]
    channels: usize,
    /// Seed of the weights --init-model writes.
    #[arg(long, default_value_t = 1, requires = "init_model")]
    seed: u64,
    /// Print the engine's name and version.
    #[arg(short = 'V', long)]
    version: bool,
}

fn main() -> ExitCode {
    // Warnings only: some GUIs show or never drain the engine's stderr. `KOMA_LOG=debug`
    // adds why each search stopped.
    progress::logger::init(progress::logger::LevelFilter::Warn);
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if args.version {
        println!("{}", usi::usi::ENGINE_NAME);
        return ExitCode::SUCCESS;
    }
    if let Some(stem) = &args.init_model {
        return init_model(stem, &args);
    }
    if args.xboard {
        let stdin = std::io::stdin();
        usi::xboard::Xboard::new(ProtocolOutput::stdout()).run(stdin.lock());
        return ExitCode::SUCCESS;
    }
    // Protocol detection: the first non-empty command. Lines that are not text before
    // it get USI's error line (an XBoard GUI starts with `xboard`).
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut usi = usi::usi::Usi::new(ProtocolOutput::stdout());
    let first = loop {
        match read_line(&mut input) {
            None => return ExitCode::SUCCESS,
            Some(Line::Text(t)) if t.trim().is_empty() => continue,
            Some(Line::Text(t)) => break t,
            Some(bad) => {
                usi.handle_line(&bad);
            }
        }
    };
    if first.trim() == "xboard" {
        drop(usi);
        let mut x = usi::xboard::Xboard::new(ProtocolOutput::stdout());
        x.handle(first.trim());
        x.run(input);
    } else if usi.handle(first.trim()) {
        usi.run(input);
    }
    ExitCode::SUCCESS
}

/// A small untrained network (one block of 16 channels unless told), written by
/// `model::init_checkpoint` as `koma init` writes its networks.
#[cfg(feature = "torch")]
fn init_model(stem: &std::path::Path, args: &Args) -> ExitCode {
    let config = model::NetConfig {
        blocks: args.blocks,
        channels: args.channels,
        value_channels: 4,
        value_hidden: 16,
        ..Default::default()
    };
    match model::init_checkpoint(args.variant, &config, args.seed, stem) {
        Ok((paths, _)) => {
            println!("{}", paths.meta.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("koma-usi --init-model: {e}");
            ExitCode::from(if matches!(e, model::InitError::Net(_)) { 2 } else { 1 })
        }
    }
}

/// Without libtorch no network can be initialised: say so.
#[cfg(not(feature = "torch"))]
fn init_model(_: &std::path::Path, _: &Args) -> ExitCode {
    eprintln!("koma-usi --init-model: this build has no libtorch (built without the `torch` feature); use `koma init`");
    ExitCode::from(2)
}
