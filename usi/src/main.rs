//! `koma-usi`: the engine binary. A GUI starts it with no arguments and talks USI;
//! `koma-usi --xboard` (or a first command `xboard`) talks XBoard protocol 2.
//!
//! `koma-usi --init-model STEM [--variant shogi|sho|dai] [--blocks N] [--channels N]
//! [--seed N]` writes a freshly initialised (untrained) network as a checkpoint, for
//! tests and smoke runs (`STEM.json` + `STEM.safetensors`).

use std::process::ExitCode;

use usi::input::{read_line, Line};
use usi::Out;

const HELP: &str = "koma-usi: koma's shogi engine (USI; XBoard for sho and dai shogi)

usage:
  koma-usi                 USI on stdin/stdout (a first command `xboard` switches to XBoard)
  koma-usi --xboard        XBoard protocol 2
  koma-usi --init-model STEM [--variant shogi|sho|dai] [--blocks N] [--channels N] [--seed N]
                           write an untrained network checkpoint (STEM.json, STEM.safetensors)
  koma-usi --help | --version

Options are set through the protocol (USI setoption, XBoard option); see the README
section \"Playing in a GUI\".";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {}
        Some("--xboard") if args.len() == 1 => {
            let stdin = std::io::stdin();
            usi::xboard::Xboard::new(Out::stdout()).run(stdin.lock());
            return ExitCode::SUCCESS;
        }
        Some("--usi") if args.len() == 1 => {}
        Some("--init-model") => return init_model(&args[1..]),
        Some("--help") | Some("-h") => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Some("--version") | Some("-V") => {
            println!("{}", usi::usi::ENGINE_NAME);
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("koma-usi: unknown argument '{other}'\n\n{HELP}");
            return ExitCode::from(2);
        }
    }
    // Protocol detection: the first non-empty command. Lines that are not text before
    // it get USI's error line (an XBoard GUI starts with `xboard`).
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut usi = usi::usi::Usi::new(Out::stdout());
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
        let mut x = usi::xboard::Xboard::new(Out::stdout());
        x.handle(first.trim());
        x.run(input);
    } else if usi.handle(first.trim()) {
        usi.run(input);
    }
    ExitCode::SUCCESS
}

fn init_model(args: &[String]) -> ExitCode {
    let mut stem = None;
    let mut variant = rules::Variant::Shogi;
    let mut config =
        model::NetConfig { blocks: 1, channels: 16, value_channels: 4, value_hidden: 16, ..Default::default() };
    let mut seed = 1u64;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_default();
        let bad = |what: &str, v: &str| {
            eprintln!("koma-usi --init-model: bad {what} '{v}'");
            ExitCode::from(2)
        };
        match a.as_str() {
            "--variant" => {
                let v = val();
                match v.parse() {
                    Ok(x) => variant = x,
                    Err(_) => return bad("variant", &v),
                }
            }
            "--blocks" => {
                let v = val();
                match v.parse() {
                    Ok(x) => config.blocks = x,
                    Err(_) => return bad("block count", &v),
                }
            }
            "--channels" => {
                let v = val();
                match v.parse() {
                    Ok(x) => config.channels = x,
                    Err(_) => return bad("channel count", &v),
                }
            }
            "--seed" => {
                let v = val();
                match v.parse() {
                    Ok(x) => seed = x,
                    Err(_) => return bad("seed", &v),
                }
            }
            s if !s.starts_with("--") && stem.is_none() => stem = Some(s.to_string()),
            other => return bad("argument", other),
        }
    }
    let Some(stem) = stem else {
        eprintln!("koma-usi --init-model: give the checkpoint path (STEM)");
        return ExitCode::from(2);
    };
    let shape = model::encoding::Encoder::new(variant).net_shape();
    let net = match model::Net::new(&config, shape, seed, model::tch::Device::Cpu) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("koma-usi --init-model: {e}");
            return ExitCode::from(2);
        }
    };
    let info = model::CheckpointInfo {
        variant: variant.name().to_string(),
        encoder_version: model::encoding::ENCODER_VERSION,
        step: 0,
    };
    match model::save_checkpoint(&net, &stem, &info) {
        Ok((paths, _)) => {
            println!("{}", paths.meta.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("koma-usi --init-model: {e}");
            ExitCode::from(1)
        }
    }
}
