//! The `[eval]` table: the evaluation games of a training run, periodic and at its end
//! (`crate::evaluation::TrainingEval` plays them).

use std::path::{Path, PathBuf};

use arena::ladder::{Ladder, LadderError};
use rules::Variant;
use serde::{Deserialize, Serialize};

use super::train::MAX_STEPS;
use arena::network_match::parse_player;

/// The network's search in evaluation games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvalSearch {
    /// The engine's defaults (PUCT, `search::SearchConfig::for_play`): what `koma-usi`
    /// plays, with the config's `search.leaf_material_mix` (and scale), which the network
    /// was trained beside.
    Engine,
    /// The config's `[search]` table, as self-play searches.
    Selfplay,
}

/// The ladder whose rungs the evaluation may name and whose ratings it places the run on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum EvalLadder {
    /// The shipped ladder of a game (`arena/ladder.toml`, `ladder-sho.toml`, `ladder-dai.toml`),
    /// written as the game's name.
    Shipped(Variant),
    /// A ladder table file (the format of `arena/ladder.toml`).
    File(PathBuf),
}

/// An empty `eval.ladder`.
#[derive(Debug, thiserror::Error)]
#[error("a game's name (shogi, sho, dai) or a ladder file")]
pub struct NoLadderName;

impl TryFrom<String> for EvalLadder {
    type Error = NoLadderName;

    fn try_from(text: String) -> Result<Self, NoLadderName> {
        if text.trim().is_empty() {
            return Err(NoLadderName);
        }
        // A game's name, unless a file of that name exists (as `Ladder::load_or_shipped`).
        match text.parse::<Variant>() {
            Ok(v) if !Path::new(&text).exists() => Ok(EvalLadder::Shipped(v)),
            _ => Ok(EvalLadder::File(PathBuf::from(text))),
        }
    }
}

impl From<EvalLadder> for String {
    fn from(l: EvalLadder) -> String {
        match l {
            EvalLadder::Shipped(v) => v.name().to_string(),
            EvalLadder::File(p) => p.display().to_string(),
        }
    }
}

impl EvalLadder {
    /// Reads the ladder (a file's errors name the file).
    pub fn load(&self) -> Result<Ladder, LadderError> {
        match self {
            EvalLadder::Shipped(v) => Ok(Ladder::shipped_for(*v)),
            EvalLadder::File(p) => Ladder::load(p),
        }
    }
}

/// Evaluation settings (`[eval]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Evaluation games every this many optimiser steps (a multiple of
    /// `train.checkpoint_interval` is sensible); 0 disables. Default 5000.
    /// Valid: 0..=1e12. See `trainer::evaluation::report` for what is written.
    pub interval: u64,
    /// Also evaluate the last checkpoint (and the earlier ones of `at_end_points`) once
    /// the run reaches `train.max_minutes` or `max_steps` (not when it is interrupted),
    /// after training and self-play have stopped, so that on a small machine the games
    /// take no time from them (and take every core). With `interval = 0` the run is
    /// evaluated only then. Default false.
    pub at_end: bool,
    /// Checkpoints that `at_end` evaluates, spread evenly over the run's steps, the last
    /// being the last checkpoint (`trainer::evaluation::points`), so that the plot shows
    /// the run's course; steps `eval.jsonl` already holds are not played again. Default
    /// 1. Valid: 1..=1000.
    pub at_end_points: usize,
    /// Games against each opponent (each opening twice, colours swapped); with `ladder`,
    /// against each rung it plays. Default 40. Valid: 1..=100000 when `interval` > 0 or
    /// `at_end` (no evaluation is `interval = 0`, `at_end = false`).
    pub games: usize,
    /// Games against each opponent at the points of `at_end_points` before the last checkpoint:
    /// fewer buys the course at the price of wider intervals there. Default: `games`.
    /// Valid: 1..=100000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_games: Option<usize>,
    /// Opponents: `random`, `greedy`, `previous` (the checkpoint of the previous
    /// evaluation), a rung of the ladder by name (`fsf1`, `gnushogi1`, ...: see
    /// `arena/ladder.toml`; the result is then also a ladder Elo), `ladder` (the rungs
    /// around the network, chosen anew at each evaluation: `trainer::evaluation::staircase`),
    /// or an arena player `NAME=SPEC` (`arena/README.md`). An engine that does not start
    /// is left out with a warning (with `ladder`, its rungs). Default
    /// `["random", "greedy", "previous"]`.
    pub opponents: Vec<String>,
    /// With `ladder`: the rung whose rating stands for the network's before its first
    /// evaluation (the staircase starts at the rung above it); later evaluations start
    /// from the last rating. Default: the ladder's lowest rung.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ladder_start: Option<String>,
    /// With `ladder`: rungs played at most per evaluation. Default 4. Valid: 1..=1000.
    pub ladder_rungs: usize,
    /// Simulations per move of the network (1 plays the raw policy's favourite); engines
    /// without their own depth get `go nodes` of the same. The search is deterministic
    /// (no root noise). Default 128 (the engine plays at 800; 16-32 simulations underrate
    /// it). Valid: 1..=1000000.
    pub simulations: u32,
    /// Leaves per network evaluation of one game's search (virtual loss between them, as
    /// the engine's `BatchSize`). Default 8. Valid: 1..=256.
    pub batch_size: usize,
    /// Games played at once (their leaves share forward passes); 0 = all `games` of a
    /// match, at most 64. Default 0. Valid: 0..=10000.
    pub concurrency: usize,
    /// The network's search: `engine` (the engine's defaults: PUCT, what `koma-usi`
    /// plays, with `[search]`'s leaf material mix) or `selfplay` (this file's `[search]`
    /// table). Default `engine`.
    pub search: EvalSearch,
    /// Games longer than this many plies are draws. Default 256. Valid: 1..=100000.
    pub max_plies: u32,
    /// Uniformly random plies at the start of the games (variety; both players share
    /// them), when there is no `openings` file. Default 2. Valid: 0..=10000.
    pub random_plies: u32,
    /// An opening file (`data/openings/shogi.txt`; the format of
    /// `data/openings/README.md`, as `koma arena --openings`) instead of random plies.
    /// Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub openings: Option<PathBuf>,
    /// The ladder whose rungs `opponents` names and the `ladder` opponent climbs: a ladder
    /// table (the format of `arena/ladder.toml`), or `shogi`, `sho`, `dai` for that game's
    /// shipped ladder (`arena/ladder.toml`, `arena/ladder-sho.toml`,
    /// `arena/ladder-dai.toml`). Default `shogi`.
    pub ladder: EvalLadder,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            interval: 5000,
            at_end: false,
            at_end_points: 1,
            games: 40,
            early_games: None,
            opponents: vec!["random".into(), "greedy".into(), "previous".into()],
            ladder_start: None,
            ladder_rungs: 4,
            simulations: 128,
            batch_size: 8,
            concurrency: 0,
            search: EvalSearch::Engine,
            max_plies: 256,
            random_plies: 2,
            openings: None,
            ladder: EvalLadder::Shipped(Variant::Shogi),
        }
    }
}

/// The opponent that names the previous evaluation's checkpoint.
pub const PREVIOUS: &str = "previous";
/// The opponent that names the rungs of the ladder around the network.
pub const LADDER: &str = "ladder";

/// The keys of `[eval]` as they were spelt in `[train]` before the table had its own:
/// (old key in `[train]`, key in `[eval]`).
pub const OLD_TRAIN_KEYS: [(&str, &str); 11] = [
    ("eval_interval", "interval"),
    ("eval_games", "games"),
    ("eval_opponents", "opponents"),
    ("eval_simulations", "simulations"),
    ("eval_batch_size", "batch_size"),
    ("eval_concurrency", "concurrency"),
    ("eval_search", "search"),
    ("eval_max_plies", "max_plies"),
    ("eval_random_plies", "random_plies"),
    ("eval_openings", "openings"),
    ("eval_ladder", "ladder"),
];

impl EvalConfig {
    /// Whether evaluation games are played at all.
    pub fn enabled(&self) -> bool {
        self.interval > 0 || self.at_end
    }

    /// Games against each opponent in the evaluation of a checkpoint: `games` for the
    /// run's last, `early_games` for the earlier points of `at_end_points`.
    pub fn games_for(&self, last_checkpoint: bool) -> usize {
        if last_checkpoint {
            self.games
        } else {
            self.early_games.unwrap_or(self.games)
        }
    }

    /// Whether an evaluation falls due at optimiser step `step` during training.
    pub fn due(&self, step: u64) -> bool {
        self.interval > 0 && step % self.interval == 0
    }

    /// Checks every field against its valid range (in the field's documentation) and
    /// that the ladder loads and every opponent names a player; the error names the field.
    pub fn validate(&self) -> Result<(), model::ConfigError> {
        use model::check_whole;
        let whole = |name: &str, v: u64, min: u64, max: u64| check_whole(&format!("eval.{name}"), v, min, max);
        whole("interval", self.interval, 0, MAX_STEPS)?;
        if self.enabled() {
            // Zero games would score 0.5 against every opponent: off is interval = 0.
            whole("games", self.games as u64, 1, 100_000).map_err(|e| match e {
                model::ConfigError::OutOfRange { field, value, range } => model::ConfigError::OutOfRange {
                    field,
                    value,
                    range: format!("{range}; eval.interval = 0 and at_end = false turn evaluation off"),
                },
                other => other,
            })?;
        }
        whole("at_end_points", self.at_end_points as u64, 1, 1000)?;
        if let Some(n) = self.early_games {
            whole("early_games", n as u64, 1, 100_000)?;
        }
        whole("ladder_rungs", self.ladder_rungs as u64, 1, 1000)?;
        whole("simulations", self.simulations as u64, 1, 1_000_000)?;
        whole("batch_size", self.batch_size as u64, 1, 256)?;
        whole("concurrency", self.concurrency as u64, 0, 10_000)?;
        whole("max_plies", self.max_plies as u64, 1, 100_000)?;
        whole("random_plies", self.random_plies as u64, 0, 10_000)?;
        let bad = |field: &str, value: String, expected: String| model::ConfigError::BadValue {
            field: format!("eval.{field}"),
            value,
            expected,
        };
        let ladder = self.ladder.load().map_err(|e| bad("ladder", String::from(self.ladder.clone()), e.to_string()))?;
        for o in self.opponents.iter().filter(|o| *o != PREVIOUS && *o != LADDER) {
            parse_player(o, &ladder).map_err(|e| bad("opponents", o.clone(), e.to_string()))?;
        }
        if let Some(start) = self.ladder_start.as_ref().filter(|s| ladder.rung(s).is_none()) {
            let rungs: Vec<&str> = ladder.rungs.iter().map(|r| r.name.as_str()).collect();
            return Err(bad("ladder_start", start.clone(), format!("a rung of eval.ladder: {}", rungs.join(", "))));
        }
        Ok(())
    }
}
