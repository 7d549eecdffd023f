//! `koma ladder`: the ladder of reference players (`arena/ladder.toml`) for scripts, and a
//! player's place on it from the `games.jsonl` of `koma arena` matches against rungs
//! (`scripts/ladder.sh` uses both).
//!
//! ```text
//! koma ladder rungs [--ladder FILE]       `# variant V`, `# tc TC`, then NAME ELO SPEC
//! koma ladder place --player NAME [--ladder FILE] GAMES.jsonl...
//! koma ladder fit --anchor NAME=ELO [--records FILE]... [--record A,B=W-D-L]... [GAMES.jsonl...]
//! ```
//!
//! `place` prints one line per rung played, then `ladder: NAME ELO [LOW, HIGH] ...`: the
//! maximum-likelihood rating against the rungs' fixed Elo with its 95% interval
//! (`arena::ladder::place`). `fit` rates every player of the games together (the ratings
//! a ladder table's `elo` takes, from matches played apart), one player held at its Elo;
//! `--records` (a file such as `arena/rung-pairs.toml`) and `--record` add pairs' results
//! whose games are not at hand.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use arena::pair_records::PairRecord;
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
    /// Rate every player of the games together by maximum likelihood (matches played
    /// apart count as one), one player held at a given Elo: prints each pair's record, then
    /// the ratings lowest first with the step from the one below.
    Fit {
        /// The player whose rating is held, and its Elo: `fsf5=4555`.
        #[arg(long)]
        anchor: String,
        /// A pair's result whose games are not at hand, from A's side: `fsfn1024000,gps4=24-1-15`
        /// (A won 24, drew 1, lost 15). Repeatable; added to the games' records.
        #[arg(long = "record", value_name = "A,B=W-D-L")]
        records: Vec<String>,
        /// A file of pair records (`arena/rung-pairs.toml`: the pairs behind the shipped
        /// ladder). Repeatable.
        #[arg(long = "records", value_name = "FILE")]
        record_files: Vec<PathBuf>,
        /// games.jsonl files written by `koma arena`.
        #[arg(required_unless_present_any = ["records", "record_files"])]
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
        LadderCommand::Fit { anchor, records, record_files, games } => {
            let mut pairs = Vec::new();
            for path in &record_files {
                pairs.extend(arena::pair_records::load(path).map_err(|e| BadInput(e.to_string()))?);
            }
            for text in &records {
                pairs.push(text.parse().map_err(|e: arena::pair_records::PairRecordError| BadInput(e.to_string()))?);
            }
            fit(&anchor, &pairs, &games)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn fit(anchor: &str, records: &[PairRecord], games: &[PathBuf]) -> Result<()> {
    let bad_anchor = || BadInput(format!("--anchor {anchor}: expected NAME=ELO, e.g. fsf5=4555"));
    let (anchor_name, anchor_elo) = anchor.split_once('=').ok_or_else(bad_anchor)?;
    let anchor_elo: f64 = anchor_elo.trim().parse().map_err(|_| bad_anchor())?;
    let paths: Vec<&Path> = games.iter().map(PathBuf::as_path).collect();
    let (mut names, mut results) =
        arena::ladder::pair_results_from_games(&paths).map_err(|e| BadInput(e.to_string()))?;
    for r in records {
        arena::ladder::add_pair_record(&mut names, &mut results, &r.a, &r.b, r.wdl);
    }
    let Some(a) = names.iter().position(|n| n == anchor_name) else {
        return Err(BadInput(format!("--anchor {anchor_name}: no such player in the games")).into());
    };
    if let Some(lone) = unconnected(&results, a).map(|i| &names[i]) {
        return Err(
            BadInput(format!("{lone} has no chain of games to {anchor_name}: its rating would be arbitrary")).into()
        );
    }
    for i in 0..names.len() {
        for j in i + 1..names.len() {
            let w = results[i][j];
            if w.games() > 0 {
                println!(
                    "fit: {} vs {}: {} games +{} ={} -{}",
                    names[i],
                    names[j],
                    w.games(),
                    w.wins,
                    w.draws,
                    w.losses
                );
            }
        }
    }
    let ratings = arena::stats::ratings(&results, a);
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&i, &j| ratings[i].total_cmp(&ratings[j]));
    let mut below: Option<f64> = None;
    for i in order {
        let r = anchor_elo + ratings[i];
        let step = below.map_or("-".to_string(), |b| format!("{:+.0}", r - b));
        println!("fit: {} {:.0} (step {step})", names[i], r);
        below = Some(r);
    }
    Ok(())
}

/// A player that no chain of games links to player `a`, if any.
fn unconnected(results: &[Vec<Wdl>], a: usize) -> Option<usize> {
    let mut seen = vec![false; results.len()];
    let mut stack = vec![a];
    seen[a] = true;
    while let Some(i) = stack.pop() {
        for j in 0..results.len() {
            if !seen[j] && results[i][j].games() > 0 {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    seen.iter().position(|s| !s)
}
