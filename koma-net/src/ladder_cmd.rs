//! `koma ladder`: the ladder of reference players (`arena/ladder.toml`) for scripts, and a
//! player's place on it from the `games.jsonl` of `koma arena` matches against rungs
//! (`scripts/ladder.sh` uses both).
//!
//! ```text
//! koma ladder rungs [--ladder FILE]       `# variant V`, `# tc TC`, then NAME ELO SPEC
//! koma ladder place --player NAME [--ladder FILE] GAMES.jsonl...
//! ```
//!
//! `place` prints one line per rung played, then `ladder: NAME ELO [LOW, HIGH] ...`: the
//! maximum-likelihood rating against the rungs' fixed Elo with its 95% interval
//! (`arena::ladder::place`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use arena::{Ladder, Placement, Wdl};
use clap::{Args, Subcommand};

use crate::BadInput;

#[derive(Args)]
pub struct LadderArgs {
    #[command(subcommand)]
    what: LadderCommand,
}

#[derive(Subcommand)]
enum LadderCommand {
    /// Print `# variant V` and `# tc TC` (where the rungs were measured), then the
    /// rungs: NAME ELO SPEC, one per line, lowest first.
    Rungs {
        /// A ladder table, or shogi/sho/dai for that game's shipped one (default: the
        /// shipped arena/ladder.toml).
        #[arg(long)]
        ladder: Option<PathBuf>,
    },
    /// Place a player on the ladder from its games against rungs.
    Place {
        /// The player's name in the games.
        #[arg(long)]
        player: String,
        #[arg(long)]
        ladder: Option<PathBuf>,
        /// games.jsonl files written by `koma arena`.
        #[arg(required = true)]
        games: Vec<PathBuf>,
    },
}

fn load(path: Option<&Path>) -> Result<Ladder> {
    match path {
        Some(p) => Ladder::load_or_shipped(&p.to_string_lossy()).map_err(|e| BadInput(e.to_string()).into()),
        None => Ok(Ladder::shipped()),
    }
}

fn elo(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.0}")
    } else if x > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

pub fn ladder(args: LadderArgs) -> Result<ExitCode> {
    match args.what {
        LadderCommand::Rungs { ladder } => {
            let ladder = load(ladder.as_deref())?;
            println!("# variant {}", ladder.variant);
            println!("# tc {}", ladder.tc);
            for r in ladder.rungs {
                println!("{} {} {}", r.name, r.elo, r.spec);
            }
        }
        LadderCommand::Place { player, ladder, games } => {
            let ladder = load(ladder.as_deref())?;
            let paths: Vec<&Path> = games.iter().map(PathBuf::as_path).collect();
            let results = arena::ladder::results_from_games(&paths, &player).map_err(|e| BadInput(e.to_string()))?;
            let mut rungs: Vec<(f64, Wdl)> = Vec::new();
            for (opponent, w) in &results {
                let Some(rung) = ladder.rung(opponent) else {
                    println!("ladder: {player} vs {opponent}: not a rung, left out");
                    continue;
                };
                let p = Placement::against(rung.elo, w);
                println!(
                    "ladder: {player} vs {opponent} ({}): {} games +{} ={} -{}, score {:.3} -> {} [{}, {}]",
                    elo(rung.elo),
                    w.games(),
                    w.wins,
                    w.draws,
                    w.losses,
                    w.score(),
                    elo(p.elo),
                    elo(p.low),
                    elo(p.high)
                );
                rungs.push((rung.elo, *w));
            }
            let Some(p) = arena::place(&rungs) else {
                return Err(BadInput(format!("no games of {player} against a rung")).into());
            };
            println!(
                "ladder: {player} {} [{}, {}] (maximum likelihood over {} rungs, {} games; 95% interval)",
                elo(p.elo),
                elo(p.low),
                elo(p.high),
                rungs.len(),
                p.games
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
