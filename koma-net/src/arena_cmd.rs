//! `koma arena`: matches between checkpoints, built-in baselines and engines (see
//! `arena/README.md`). Other tools call it; the flags and outputs are fixed:
//!
//! ```text
//! koma arena --player NAME=SPEC [--player NAME=SPEC ...] [--gauntlet NAME] --games N
//!     [--tc byoyomi=MS | fischer=BASE_MS+INC_MS | nodes=N | depth=N] [--openings FILE]
//!     [--concurrency K] [--sprt ELO0,ELO1] [--resume] --out DIR
//! ```
//!
//! Writes DIR/games.jsonl, DIR/report.md (and records, a plot); prints the table on
//! stdout and, as the last line, a one-line summary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use arena::{MatchConfig, Opening, PlayerSpec, SpecKind, Sprt, TimeControl};
use clap::Args;
use rules::{EndRules, ImpasseRule, Variant};

use koma_net::bad;

#[derive(Args)]
pub struct ArenaArgs {
    /// A player, NAME=SPEC; SPEC is random, greedy,
    /// koma:CHECKPOINT[,nodes=N][,device=D][,batch=B][,threads=T][,SEARCH_FIELD=VALUE],
    /// usi:COMMAND[,Option=Value...] or xboard:COMMAND[,Option=Value...] (engines also
    /// take depth=N / nodes=N: a fixed limit for that player). Repeat for each player.
    #[arg(long = "player", required = true)]
    players: Vec<String>,
    /// Play only the pairs of this player against each other player (default: round robin).
    #[arg(long)]
    gauntlet: Option<String>,
    /// Play each player against the next one in the --player list only (a ladder).
    #[arg(long, conflicts_with = "gauntlet")]
    ladder: bool,
    /// Games per pair; each opening is played twice, colours swapped.
    #[arg(long)]
    games: u32,
    /// Time control: byoyomi=MS, fischer=BASE_MS+INC_MS, nodes=N or depth=N.
    #[arg(long, default_value = "byoyomi=1000")]
    tc: String,
    /// Opening file: one opening per line, `startpos moves ...`, `sfen ... [moves ...]`
    /// or a bare SFEN (default: data/openings/<variant>.txt if found, else the start position).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Games at once, at least 1 (default: half the cores).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    concurrency: Option<usize>,
    /// Stop when an SPRT of ELO0 against ELO1 decides (alpha = beta = 0.05; or
    /// ELO0,ELO1,ALPHA,BETA). Needs a match of one pair.
    #[arg(long)]
    sprt: Option<String>,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
    /// Variant: shogi, sho or dai (default: the checkpoints' variant, else shogi).
    #[arg(long)]
    variant: Option<String>,
    /// Maximum game length in plies (SFEN move number - 1), at least 1; then a draw.
    #[arg(long, default_value_t = 320, value_parser = clap::value_parser!(u32).range(1..))]
    max_plies: u32,
    /// Impasse rule: 27 (declaration, USI `bestmove win`) or 24 (points); default 27. Or
    /// give --entering-king-rule.
    #[arg(long)]
    impasse: Option<u32>,
    /// Entering king rule by YaneuraOu's name: NoEnteringKing, CSARule24, CSARule27 (=
    /// --impasse 27) or TryRule; declarations are judged by it (docs/rules.md).
    #[arg(long)]
    entering_king_rule: Option<String>,
    /// Grace in milliseconds over the clock before a late move loses on time.
    #[arg(long, default_value_t = 1000)]
    time_margin_ms: u64,
    /// Seconds an engine without a clock (nodes, depth) may be silent before it loses as
    /// hung (a move that comes later, as from a `koma:` player on a loaded machine, is
    /// played), and an engine may take to start (USI `usiok`, `readyok`); at least 1.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    hang_timeout: u64,
    /// Seed for the built-in players and the first opening.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// No per-game lines on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// Continue the match in --out: the games in its games.jsonl count and only the rest
    /// of the schedule is played (the same players, games, openings, time control and end
    /// rules; --concurrency may differ). Without it, an --out that holds games is an error.
    #[arg(long)]
    resume: bool,
}

fn parse_sprt(text: &str) -> Result<Sprt> {
    let nums: Vec<f64> = text
        .split(',')
        .map(|t| t.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad(format!("--sprt {text}: expected ELO0,ELO1[,ALPHA,BETA]")))?;
    let mut t = match nums.as_slice() {
        [e0, e1] | [e0, e1, _, _] => Sprt::new(*e0, *e1),
        _ => return Err(bad(format!("--sprt {text}: expected ELO0,ELO1[,ALPHA,BETA]"))),
    };
    if let [_, _, a, b] = nums.as_slice() {
        t.alpha = *a;
        t.beta = *b;
    }
    // Written so that NaN fails every comparison.
    let valid = t.elo1 > t.elo0 && 0.0 < t.alpha && t.alpha < 0.5 && 0.0 < t.beta && t.beta < 0.5;
    if !valid {
        return Err(bad(format!("--sprt {text}: needs ELO1 > ELO0 and 0 < alpha, beta < 0.5")));
    }
    Ok(t)
}

/// The opening file given, else `data/openings/<variant>.txt` if found, else the start
/// position.
pub fn openings_for(variant: Variant, given: Option<&std::path::Path>) -> Result<Vec<Opening>> {
    Ok(match given {
        Some(path) => arena::load_openings(variant, path).map_err(|e| bad(e.to_string()))?,
        None => {
            let shipped = PathBuf::from("data/openings").join(format!("{}.txt", variant.name()));
            if shipped.is_file() {
                arena::load_openings(variant, &shipped).map_err(|e| bad(e.to_string()))?
            } else {
                vec![Opening::startpos(variant)]
            }
        }
    })
}

pub fn arena(args: ArenaArgs) -> Result<ExitCode> {
    let players: Vec<PlayerSpec> =
        args.players.iter().map(|p| p.parse::<PlayerSpec>().map_err(|e| bad(e.to_string()))).collect::<Result<_>>()?;
    let tc: TimeControl = args.tc.parse().map_err(|e: arena::player::BadTimeControl| bad(e.to_string()))?;
    let sprt = args.sprt.as_deref().map(parse_sprt).transpose()?;

    // The variant: given, or the checkpoints'.
    let mut variant = match &args.variant {
        Some(v) => Some(v.parse::<Variant>().map_err(|e| bad(e.to_string()))?),
        None => None,
    };
    for p in &players {
        if let SpecKind::Koma { checkpoint, .. } = &p.kind {
            let (v, _) = arena::koma_player::checkpoint_variant_and_step(checkpoint).map_err(|e| bad(e.to_string()))?;
            match variant {
                None => variant = Some(v),
                Some(w) if w != v => {
                    return Err(bad(format!("player {}: the checkpoint plays {v}, the match is {w}", p.name)))
                }
                _ => {}
            }
        }
    }
    let variant = variant.unwrap_or(Variant::Shogi);

    let openings = openings_for(variant, args.openings.as_deref())?;
    let impasse = match (args.impasse, args.entering_king_rule.as_deref()) {
        (Some(_), Some(_)) => return Err(bad("give --impasse or --entering-king-rule, not both".to_string())),
        (None, Some(name)) => name.parse().map_err(|e| bad(format!("--entering-king-rule: {e}")))?,
        (None | Some(27), None) => ImpasseRule::Declaration27,
        (Some(24), None) => ImpasseRule::Points24,
        (Some(n), None) => return Err(bad(format!("--impasse {n}: expected 27 or 24"))),
    };
    let cfg = MatchConfig {
        players,
        gauntlet: args.gauntlet.clone(),
        ladder: args.ladder,
        games: args.games,
        tc,
        openings,
        concurrency: args.concurrency.unwrap_or_else(arena::default_concurrency),
        sprt,
        out: args.out.clone(),
        variant,
        end_rules: EndRules { impasse, max_plies: Some(args.max_plies) },
        time_margin: Duration::from_millis(args.time_margin_ms),
        hang_timeout: Duration::from_secs(args.hang_timeout),
        seed: args.seed,
        command_line: Some(
            std::env::args()
                .map(|a| shlex::try_quote(&a).map(|c| c.into_owned()).unwrap_or(a))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        progress: !args.quiet,
        resume: args.resume,
    };
    let report = arena::run_match(&cfg).map_err(|e| match e {
        arena::ArenaError::Io { .. } => anyhow::Error::new(e),
        other => bad(other.to_string()),
    })?;
    print!("{}", report.table());
    println!("{}", report.summary());
    Ok(ExitCode::SUCCESS)
}
