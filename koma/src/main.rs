//! `koma`: the command line of the koma training system.
//!
//! The rules and records commands run here; this package depends on no crate that links
//! libtorch, so they start at once (other tools call `koma moves` per position). The
//! network commands run in the companion binary `koma-net` next to this
//! one (see `lib.rs`).
//! Exit status 2 means bad input (a flag, a SFEN, a move), with a message on stderr
//! that names the problem.

mod convert_cmd;
mod convert_hcpe;
mod convert_output;
mod rules_cmds;

use clap::{Arg, CommandFactory, Parser, Subcommand};
use koma::{finish, network_command, COMPANION, NETWORK_COMMANDS};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "koma", version, about = "Self-play training for shogi, sho shogi and dai shogi")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaves of the legal move tree (move generator check).
    Perft(rules_cmds::PerftArgs),
    /// Print the legal moves of positions, sorted, on one line.
    Moves(rules_cmds::MovesArgs),
    /// Play move lists read from stdin and print how each game stands.
    Outcome(rules_cmds::OutcomeArgs),
    /// Convert game records between KIF, KI2, CSA, USI and Western text, and to and from
    /// dlshogi's hcpe (hcpe3 read) and YaneuraOu's psv.
    Convert(convert_cmd::ConvertArgs),
}

/// The whole command line: ours, and a pass-through entry for each network command
/// (its help comes from the companion).
fn command_line() -> clap::Command {
    let mut command = Cli::command();
    for c in NETWORK_COMMANDS {
        let rest = Arg::new("args").num_args(0..).trailing_var_arg(true).allow_hyphen_values(true);
        let sub = clap::Command::new(c.name)
            .about(c.about)
            .aliases(c.aliases.iter().copied())
            .disable_help_flag(true)
            .arg(rest.value_parser(clap::value_parser!(OsString)));
        command = command.subcommand(sub);
    }
    command
}

fn main() -> ExitCode {
    progress::logger::init(progress::logger::LevelFilter::Info);
    let args: Vec<OsString> = std::env::args_os().collect();
    // `koma help train` shows the companion's help for train.
    let word = |i: usize| args.get(i).and_then(|a| a.to_str());
    if word(1).and_then(network_command).is_some()
        || (word(1) == Some("help") && word(2).and_then(network_command).is_some())
    {
        return finish(run_companion(&args[1..]));
    }
    let cli: Cli = match koma::parse_or_exit(command_line()) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    finish(match cli.command {
        Command::Perft(args) => rules_cmds::perft(args),
        Command::Moves(args) => rules_cmds::moves(args),
        Command::Outcome(args) => rules_cmds::outcome(args),
        Command::Convert(args) => convert_cmd::convert(args),
    })
}

/// The companion binary: next to this one (symbolic links to `koma` resolved).
fn companion_path() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let dir = exe.parent().ok_or_else(|| anyhow::anyhow!("{}: no folder", exe.display()))?;
    Ok(dir.join(format!("{COMPANION}{}", std::env::consts::EXE_SUFFIX)))
}

/// Runs the companion with `args` in place of this process (Unix: exec, so the
/// process id, signals and exit status are the companion's own).
fn run_companion(args: &[OsString]) -> anyhow::Result<ExitCode> {
    let path = companion_path()?;
    if !path.is_file() {
        let what = args.first().and_then(|a| a.to_str()).unwrap_or("");
        return Err(anyhow::anyhow!(
            "`koma {what}` runs in the network binary {}, which is missing; build both with \
             `cargo build --release -p koma -p koma-net`",
            path.display()
        ));
    }
    let mut command = std::process::Command::new(&path);
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.arg0("koma").exec();
        Err(anyhow::Error::new(error).context(format!("running {}", path.display())))
    }
    #[cfg(not(unix))]
    {
        let status =
            command.status().map_err(|e| anyhow::Error::new(e).context(format!("running {}", path.display())))?;
        Ok(ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_the_rules_and_the_network_commands() {
        let help = command_line().render_help().to_string();
        for name in ["perft", "moves", "outcome", "convert", "train", "analyse", "evaluate", "arena"] {
            assert!(help.contains(&format!("  {name} ")), "{name} missing from:\n{help}");
        }
        assert!(!help.contains("  eval "), "the old name is a hidden alias:\n{help}");
    }
}
