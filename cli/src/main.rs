//! `koma`: the command line of the koma training system.
//!
//! Subcommands are thin: each parses its flags and calls into a crate.
//! Exit status 2 means bad input (a flag, a SFEN, a move), with a message
//! on stderr that names the problem.

mod arena_cmd;
mod convert_cmd;
mod convert_hcpe;
mod gen_cmd;
mod ladder_cmd;
mod model_cmds;
mod rules_cmds;
mod selfplay_cmd;
mod train_cmd;

use clap::{Parser, Subcommand};
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
    /// Write a freshly initialised network as a checkpoint.
    Init(model_cmds::InitArgs),
    /// Evaluate a position with a checkpoint: WDL and the top moves.
    Eval(model_cmds::EvalArgs),
    /// Convert game records between KIF, KI2, CSA, USI and Western text.
    Convert(convert_cmd::ConvertArgs),
    /// Play matches between checkpoints, built-in players and USI/XBoard engines.
    Arena(arena_cmd::ArenaArgs),
    /// The ladder of reference players: its rungs, a player's place on it.
    Ladder(ladder_cmd::LadderArgs),
    /// Play self-play games and write training sample chunks.
    Selfplay(selfplay_cmd::SelfplayArgs),
    /// Benchmarks.
    Bench(BenchArgs),
    /// The main job: self-play and learning in one process (runs/<name>/).
    Train(train_cmd::TrainArgs),
    /// Teacher data: an engine plays itself; its moves and scores become training samples.
    Gen(gen_cmd::GenArgs),
    /// Supervised training from game records, hcpe/hcpe3 files or sample chunks (bootstrap a network).
    Learn(train_cmd::LearnArgs),
    /// Play a checkpoint against a baseline (random, greedy), a ladder rung or another checkpoint.
    Evaluate(train_cmd::EvaluateArgs),
}

#[derive(clap::Args)]
struct BenchArgs {
    #[command(subcommand)]
    what: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Raw network evaluations per second for each batch size.
    Nn(model_cmds::BenchNnArgs),
    /// Network evaluations per second inside self-play next to the raw forward pass at
    /// the same batch size (last line: `... ratio <number>`).
    Selfplay(selfplay_cmd::BenchSelfplayArgs),
}

/// Errors that mean "the user gave bad input": exit status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BadInput {}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Perft(args) => rules_cmds::perft(args),
        Command::Moves(args) => rules_cmds::moves(args),
        Command::Outcome(args) => rules_cmds::outcome(args),
        Command::Init(args) => model_cmds::init(args),
        Command::Eval(args) => model_cmds::eval(args),
        Command::Convert(args) => convert_cmd::convert(args),
        Command::Arena(args) => arena_cmd::arena(args),
        Command::Ladder(args) => ladder_cmd::ladder(args),
        Command::Selfplay(args) => selfplay_cmd::selfplay(args),
        Command::Train(args) => train_cmd::train(args),
        Command::Learn(args) => train_cmd::learn(args),
        Command::Gen(args) => gen_cmd::gen(args),
        Command::Evaluate(args) => train_cmd::evaluate(args),
        Command::Bench(args) => match args.what {
            BenchCommand::Nn(a) => model_cmds::bench_nn(a),
            BenchCommand::Selfplay(a) => selfplay_cmd::bench_selfplay(a),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("koma: error: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
