//! What the two binaries of the `koma` command share, and nothing that links libtorch.
//!
//! `koma` (this package's src/main.rs) is the command the user runs. It holds the rules
//! and records commands itself and depends on no crate that links libtorch (Cargo, not
//! the linker, keeps it so: tests/torch_free.rs), so they start in milliseconds; the
//! network commands live in the companion binary `koma-net`, which
//! `koma` finds next to itself and runs in its place (as git runs `git-foo`): arguments,
//! standard streams, signals and the exit status pass straight through.
//!
//! Adding a network command: a variant in `NetCommand` (koma-net/src/net_main.rs) and one row
//! in [`NETWORK_COMMANDS`] (name, aliases, one-line help). A unit test of `koma-net` fails
//! while the two disagree.
//!
//! [`record_input`]: the game record files both binaries read (`koma convert`, `koma book`).

pub mod record_input;

use std::process::ExitCode;

/// Errors that mean "the user gave bad input": exit status 2.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BadInput {}

/// A [`BadInput`] error with this message.
pub fn bad(msg: impl Into<String>) -> anyhow::Error {
    BadInput(msg.into()).into()
}

/// A command that `koma` hands to the companion binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkCommand {
    pub name: &'static str,
    /// Other names the command answers to (hidden from the help).
    pub aliases: &'static [&'static str],
    /// The line `koma --help` shows.
    pub about: &'static str,
}

/// The companion binary's file name (next to `koma`).
pub const COMPANION: &str = "koma-net";

/// Every command of the companion binary, in the order `koma --help` lists them.
pub const NETWORK_COMMANDS: &[NetworkCommand] = &[
    NetworkCommand { name: "init", aliases: &[], about: "Write a freshly initialised network as a checkpoint" },
    NetworkCommand {
        name: "analyse",
        aliases: &["eval", "analyze"],
        about: "Analyse one position with a network: WDL and the most likely moves",
    },
    NetworkCommand {
        name: "arena",
        aliases: &[],
        about: "Play matches between checkpoints, built-in players and USI/XBoard engines",
    },
    NetworkCommand {
        name: "ladder",
        aliases: &[],
        about: "The ladder of reference players: its rungs, and a player's place on it",
    },
    NetworkCommand {
        name: "export",
        aliases: &[],
        about: "Write a checkpoint as one self-describing model file (for koma-usi, sharing) or an ONNX model",
    },
    NetworkCommand { name: "selfplay", aliases: &[], about: "Play self-play games and write training sample chunks" },
    NetworkCommand { name: "bench", aliases: &[], about: "Benchmarks (network evaluations, self-play)" },
    NetworkCommand {
        name: "train",
        aliases: &[],
        about: "The main job: self-play and learning in one process (runs/<name>/)",
    },
    NetworkCommand {
        name: "learner",
        aliases: &[],
        about: "The learner of a run in a store (folder, s3://, gs://): trains and publishes networks",
    },
    NetworkCommand {
        name: "worker",
        aliases: &[],
        about: "A self-play worker of a run in a store: plays the newest network, uploads sample chunks",
    },
    NetworkCommand {
        name: "gen",
        aliases: &[],
        about: "Teacher data: an engine plays itself; its moves and scores become training samples",
    },
    NetworkCommand {
        name: "learn",
        aliases: &[],
        about: "Supervised training from records, hcpe/hcpe3/psv files or sample chunks (bootstrap a network)",
    },
    NetworkCommand {
        name: "evaluate",
        aliases: &[],
        about: "Play games: a checkpoint against a baseline (random, greedy) or another checkpoint",
    },
    NetworkCommand {
        name: "plot",
        aliases: &[],
        about: "Plot a training run's rating on the baseline ladder over its steps (from eval.jsonl)",
    },
    NetworkCommand {
        name: "book",
        aliases: &[],
        about: "Build an opening book (YaneuraOu's text format) from game records",
    },
    NetworkCommand {
        name: "convert-samples",
        aliases: &[],
        about: "Convert sample chunks (self-play, koma gen) to dlshogi's hcpe3",
    },
];

/// The network command `name` stands for (its name or an alias).
pub fn network_command(name: &str) -> Option<&'static NetworkCommand> {
    NETWORK_COMMANDS.iter().find(|c| c.name == name || c.aliases.contains(&name))
}

/// An error as one line: each cause once. Error types whose message already quotes
/// their source (`"{path}: {source}"`) would otherwise print that source twice, once
/// in their own message and again as the next link of the chain.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut said: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if text.is_empty() || said.iter().any(|s| s.contains(&text)) {
            continue;
        }
        said.push(text);
    }
    said.join(": ")
}

/// The exit of a command: its own status, or its error printed once on stderr with
/// status 2 for bad input and 1 otherwise.
pub fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("koma: error: {}", error_text(&e));
            if e.downcast_ref::<BadInput>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Parses the command line with clap: help and version print and exit 0, bad flags
/// print and exit 2.
pub fn parse_or_exit<T: clap::FromArgMatches>(command: clap::Command) -> Result<T, ExitCode> {
    command.try_get_matches().and_then(|m| T::from_arg_matches(&m)).map_err(|e| {
        let code = if e.use_stderr() { 2 } else { 0 };
        let _ = e.print();
        ExitCode::from(code)
    })
}

/// Files under `inputs` (folders searched recursively, in name order) whose extension
/// passes `wanted`; files named directly are taken whatever their extension.
pub fn files_under(inputs: &[std::path::PathBuf], wanted: impl Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    files::files_under(inputs, |p| wanted(p.extension().and_then(|x| x.to_str()).unwrap_or("")))
}

/// The files a command reads, by their canonical paths: an output that is one of them
/// would replace what is being read (`koma convert g.csa --to hcpe -o g.csa`).
#[derive(Default)]
pub struct InputFiles(std::collections::HashSet<std::path::PathBuf>);

impl InputFiles {
    /// The files `paths` name (those that cannot be resolved, which cannot be read
    /// either, are left out).
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a std::path::Path>) -> InputFiles {
        InputFiles(paths.into_iter().filter_map(|p| p.canonicalize().ok()).collect())
    }

    /// Whether writing `output` would replace one of the inputs (through any spelling
    /// of its path or a link).
    pub fn contains(&self, output: &std::path::Path) -> bool {
        output.canonicalize().is_ok_and(|p| self.0.contains(&p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Quoting {
        path: String,
        source: std::io::Error,
    }

    #[test]
    fn a_source_quoted_by_its_error_is_printed_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let e = anyhow::Error::new(Quoting { path: "a/ckpt-1.safetensors".into(), source: io });
        assert_eq!(error_text(&e), "a/ckpt-1.safetensors: No such file or directory (os error 2)");
        let e = e.context("loading a/ckpt-1");
        assert_eq!(error_text(&e), "loading a/ckpt-1: a/ckpt-1.safetensors: No such file or directory (os error 2)");
    }

    #[test]
    fn causes_that_add_something_are_all_printed() {
        let e: anyhow::Result<()> = Err(std::io::Error::other("disk full")).context("writing state.json");
        assert_eq!(error_text(&e.unwrap_err()), "writing state.json: disk full");
    }

    #[test]
    fn an_output_is_an_input_through_any_spelling_of_its_path() {
        let dir = std::env::temp_dir().join(format!("koma-inputs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let game = dir.join("g.csa");
        std::fs::write(&game, "PI\n+\n").unwrap();
        let inputs = InputFiles::new([game.as_path(), dir.join("missing.csa").as_path()]);
        assert!(inputs.contains(&dir.join("sub/../g.csa")));
        assert!(!inputs.contains(&dir.join("g.hcpe")), "a file that does not exist is no input");
        assert!(!inputs.contains(&dir.join("missing.csa")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn aliases_name_their_command() {
        assert_eq!(network_command("eval").map(|c| c.name), Some("analyse"));
        assert_eq!(network_command("train").map(|c| c.name), Some("train"));
        assert!(network_command("perft").is_none());
    }
}
