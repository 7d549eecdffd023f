//! `koma-net`: the network commands of `koma` (libtorch), run by the `koma` binary next
//! to it. It names itself `koma` in help and errors: users type `koma train`.
//!
//! Adding a command: a variant of [`NetCommand`] with its arguments module, and a row in
//! `koma_net::NETWORK_COMMANDS` so that `koma` hands it over (a test below checks both
//! lists agree).

mod arena_cmd;
mod bench_backends;
mod book_cmd;
mod gen_cmd;
mod ladder_cmd;
mod model_cmds;
mod plot_cmd;
mod role_cmds;
mod samples_cmd;
mod selfplay_cmd;
mod train_cmd;

use clap::{CommandFactory, Parser, Subcommand};
use koma_net::{finish, BadInput};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "koma", bin_name = "koma", version, about = "The network commands of koma (run through `koma`)")]
struct NetCli {
    #[command(subcommand)]
    command: NetCommand,
}

#[derive(Subcommand)]
enum NetCommand {
    /// Write a freshly initialised network as a checkpoint.
    Init(model_cmds::InitArgs),
    /// Analyse one position with a network: WDL and the most likely moves.
    #[command(aliases = ["eval", "analyze"])]
    Analyse(model_cmds::AnalyseArgs),
    /// Play matches between checkpoints, built-in players and USI/XBoard engines.
    Arena(arena_cmd::ArenaArgs),
    /// The ladder of reference players: its rungs, and a player's place on it.
    Ladder(ladder_cmd::LadderArgs),
    /// Write a checkpoint as one self-describing model file (for koma-usi, sharing) or an ONNX model
    Export(model_cmds::ExportArgs),
    /// Play self-play games and write training sample chunks.
    Selfplay(selfplay_cmd::SelfplayArgs),
    /// Benchmarks (network evaluations, self-play).
    Bench(BenchArgs),
    /// The main job: self-play and learning in one process (runs/<name>/).
    Train(train_cmd::TrainArgs),
    /// The learner of a run in a store (folder, s3://, gs://): trains and publishes networks
    Learner(role_cmds::LearnerArgs),
    /// A self-play worker of a run in a store: plays the newest network, uploads sample chunks
    Worker(role_cmds::WorkerArgs),
    /// Teacher data: an engine plays itself; its moves and scores become training samples
    Gen(gen_cmd::GenArgs),
    /// Supervised training from records, hcpe/hcpe3/psv files or sample chunks (bootstrap a network)
    Learn(train_cmd::LearnArgs),
    /// Play games: a checkpoint against a baseline (random, greedy) or another checkpoint.
    Evaluate(train_cmd::EvaluateArgs),
    /// Plot a training run's rating on the baseline ladder over its steps (from eval.jsonl)
    Plot(plot_cmd::PlotArgs),
    /// Build an opening book (YaneuraOu's text format) from game records
    Book(book_cmd::BookArgs),
    /// Convert sample chunks (self-play, koma gen) to dlshogi's hcpe3
    ConvertSamples(samples_cmd::ConvertSamplesArgs),
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
    /// Learner optimiser steps per second for each batch size (synthetic samples).
    Learn(model_cmds::BenchLearnArgs),
    /// Self-play's tree work without a network (the uniform evaluator): leaves per second
    /// per worker thread and the time by phase.
    Tree(selfplay_cmd::BenchTreeArgs),
    /// Network files on libtorch's CPU evaluator and on the portable CPU backend, side by side.
    Backends(bench_backends::BenchBackendsArgs),
}

fn main() -> ExitCode {
    // The libraries' notes (a worker's network, a resumed run) are what users read.
    progress::logger::init(progress::logger::LevelFilter::Info);
    let cli: NetCli = match koma_net::parse_or_exit(NetCli::command()) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    finish(match cli.command {
        NetCommand::Init(args) => model_cmds::init(args),
        NetCommand::Analyse(args) => model_cmds::analyse(args),
        NetCommand::Arena(args) => arena_cmd::arena(args),
        NetCommand::Ladder(args) => ladder_cmd::ladder(args),
        NetCommand::Export(args) => model_cmds::export(args),
        NetCommand::Selfplay(args) => selfplay_cmd::selfplay(args),
        NetCommand::Train(args) => train_cmd::train(args),
        NetCommand::Learner(args) => role_cmds::learner(args),
        NetCommand::Worker(args) => role_cmds::worker(args),
        NetCommand::Learn(args) => train_cmd::learn(args),
        NetCommand::Gen(args) => gen_cmd::gen(args),
        NetCommand::ConvertSamples(args) => samples_cmd::convert_samples(args),
        NetCommand::Evaluate(args) => train_cmd::evaluate(args),
        NetCommand::Plot(args) => plot_cmd::plot(args),
        NetCommand::Book(args) => book_cmd::book(args),
        NetCommand::Bench(args) => match args.what {
            BenchCommand::Nn(a) => model_cmds::bench_nn(a),
            BenchCommand::Selfplay(a) => selfplay_cmd::bench_selfplay(a),
            BenchCommand::Learn(a) => model_cmds::bench_learn(a),
            BenchCommand::Tree(a) => selfplay_cmd::bench_tree(a),
            BenchCommand::Backends(a) => bench_backends::bench_backends(a),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn koma_hands_over_exactly_these_commands() {
        let ours: Vec<(String, Vec<String>, String)> = NetCli::command()
            .get_subcommands()
            .map(|c| {
                let aliases = c.get_all_aliases().map(str::to_string).collect();
                (c.get_name().to_string(), aliases, c.get_about().map(|a| a.to_string()).unwrap_or_default())
            })
            .collect();
        let table: Vec<(String, Vec<String>, String)> = koma_net::NETWORK_COMMANDS
            .iter()
            .map(|c| {
                let aliases = c.aliases.iter().map(|a| a.to_string()).collect();
                (c.name.to_string(), aliases, c.about.to_string())
            })
            .collect();
        assert_eq!(ours, table, "NetCommand and koma_net::NETWORK_COMMANDS must list the same commands");
    }
}
