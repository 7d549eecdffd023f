//! A koma config file as the trainer reads it ([`TrainFileConfig`]).
//!
//! A config file is TOML with a top-level `variant` and the tables `[model]`
//! (`model::NetConfig`), `[search]` and `[selfplay]` (`selfplay::config`), `[train]`
//! ([`TrainConfig`]) and `[eval]` ([`EvalConfig`]). The text is parsed once, into all
//! the tables at the same time. Unknown keys are errors at every level (top-level keys
//! against `selfplay::config::TOP_LEVEL_KEYS`, fields by `deny_unknown_fields`); every
//! field has a default and a documented valid range, checked when the file is read.
//! The evaluation's keys were once flat `eval_*` keys of `[train]`: those are refused
//! with an error that names the key of `[eval]` to write instead.

mod eval;
mod train;

use std::collections::BTreeMap;
use std::path::Path;

use model::{LeafMaterial, NetConfig};
use rules::Variant;
use search::SearchConfig;
use selfplay::{SelfplayConfig, SelfplayFileConfig};
use serde::{Deserialize, Deserializer};

pub use eval::{EvalConfig, EvalLadder, EvalSearch, LADDER, OLD_TRAIN_KEYS, PREVIOUS};
pub use train::{LrSchedule, MaterialFade, MaterialSearch, OptimizerKind, TrainConfig, TrainPrecision, MAX_STEPS};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// A key of the evaluation in its old place (`[train]` `eval_games`).
    #[error(
        "{path}: line {line}: `train.{old}` is now `{new}` in the [eval] table: move it there \
         (`[eval]` then `{new} = ...`; the flat eval_* keys of [train] are no longer read)"
    )]
    MovedKey { path: String, line: usize, old: String, new: String },
}

/// Every table of the file, read in one pass.
#[derive(Deserialize)]
struct FileTables {
    #[serde(default = "shogi", deserialize_with = "variant_by_name")]
    variant: Variant,
    #[serde(default, alias = "net")]
    model: NetConfig,
    #[serde(default)]
    search: SearchConfig,
    #[serde(default)]
    selfplay: SelfplayConfig,
    #[serde(default)]
    train: TrainConfig,
    #[serde(default)]
    eval: EvalConfig,
    /// Top-level keys of no table (refused with the list of the known ones).
    #[serde(flatten)]
    unknown: BTreeMap<String, serde::de::IgnoredAny>,
}

fn shogi() -> Variant {
    Variant::Shogi
}

fn variant_by_name<'de, D: Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

/// A whole config file as the trainer needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainFileConfig {
    /// `variant`, `[model]`, `[search]`, `[selfplay]`.
    pub base: SelfplayFileConfig,
    pub train: TrainConfig,
    pub eval: EvalConfig,
    /// The file's text, copied to `runs/<name>/config.toml`.
    pub text: String,
}

impl TrainFileConfig {
    pub fn from_toml(text: &str, path: &str) -> Result<Self, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { path: path.into(), message };
        let t: FileTables = toml::from_str(text).map_err(|e| parse_error(&e, text, path))?;
        selfplay::config::check_top_level_names(t.unknown.keys().map(String::as_str))
            .map_err(|e| invalid(e.to_string()))?;
        let base = SelfplayFileConfig { variant: t.variant, model: t.model, search: t.search, selfplay: t.selfplay };
        base.validate().map_err(|e| invalid(e.to_string()))?;
        t.train.validate().map_err(|e| invalid(e.to_string()))?;
        t.eval.validate().map_err(|e| invalid(e.to_string()))?;
        Ok(TrainFileConfig { base, train: t.train, eval: t.eval, text: text.to_string() })
    }

    /// The leaf material setting the checkpoints of a run of this config record
    /// ([`model::LeafMaterial`], which players default to): the `[search]` table's
    /// `leaf_material_mix` and `leaf_material_scale` when the mix is above 0, else none.
    pub fn leaf_material(&self) -> Option<LeafMaterial> {
        let search = &self.base.search;
        (search.leaf_material_mix > 0.0)
            .then_some(LeafMaterial { mix: search.leaf_material_mix, scale: search.leaf_material_scale })
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: p.clone(), source })?;
        Self::from_toml(&text, &p)
    }
}

/// A TOML or field error, or the error that says where an old `eval_*` key went.
fn parse_error(e: &toml::de::Error, text: &str, path: &str) -> ConfigError {
    let moved = OLD_TRAIN_KEYS.iter().find(|(old, _)| e.message().starts_with(&format!("unknown field `{old}`")));
    match moved {
        Some((old, new)) => {
            let at = e.span().map_or(0, |s| s.start).min(text.len());
            let line = text[..at].matches('\n').count() + 1;
            ConfigError::MovedKey { path: path.into(), line, old: old.to_string(), new: new.to_string() }
        }
        None => ConfigError::Invalid { path: path.into(), message: e.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_unknown_fields() {
        let c = TrainFileConfig::from_toml("[train]\nlr = 0.1\noptimizer = \"adamw\"\n", "t").unwrap();
        assert_eq!(c.train.lr, 0.1);
        assert_eq!(c.train.optimizer, OptimizerKind::Adamw);
        assert_eq!(c.train.batch_size, 256);
        let e = TrainFileConfig::from_toml("[train]\nlearning_rate = 0.1\n", "t").unwrap_err();
        assert!(e.to_string().contains("learning_rate"), "{e}");
        let e = TrainFileConfig::from_toml("[train]\nbatch_size = 0\n", "t").unwrap_err();
        assert!(e.to_string().contains("batch_size"), "{e}");
        let c = TrainFileConfig::from_toml("[eval]\nopponents = [\"greedy\", \"fsf1\", \"previous\"]\n", "t");
        assert_eq!(c.unwrap().eval.simulations, 128);
        for bad in [
            "opponents = [\"fsf9\"]",
            "batch_size = 0",
            "search = \"fast\"",
            "simulations = 0",
            "ladder = \"/no/such/ladder.toml\"",
            "ladder = \"\"",
            "games_per_side = 2",
        ] {
            let e = TrainFileConfig::from_toml(&format!("[eval]\n{bad}\n"), "t").unwrap_err();
            assert!(e.to_string().contains(bad.split(' ').next().unwrap()), "{bad}: {e}");
        }
        let e = TrainFileConfig::from_toml("[trian]\nlr = 0.1\n", "t").unwrap_err();
        assert!(e.to_string().contains("unknown top-level key `trian`"), "{e}");
        // The tables parse with their line numbers.
        let e = TrainFileConfig::from_toml("variant = \"shogi\"\n[train]\nlr = \"fast\"\n", "t").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    /// The checkpoints of a run record its search's leaf material mix when there is one.
    #[test]
    fn the_leaf_material_record_is_the_search_mix() {
        assert_eq!(TrainFileConfig::from_toml("", "t").unwrap().leaf_material(), None);
        let c = TrainFileConfig::from_toml("[search]\nleaf_material_scale = 36\n", "t").unwrap();
        assert_eq!(c.leaf_material(), None, "a scale without a mix is no record");
        let c = TrainFileConfig::from_toml("[search]\nleaf_material_mix = 0.5\n", "t").unwrap();
        assert_eq!(c.leaf_material(), Some(LeafMaterial { mix: 0.5, scale: 6.0 }));
        let c = TrainFileConfig::from_toml("[search]\nleaf_material_mix = 0.25\nleaf_material_scale = 36\n", "t");
        assert_eq!(c.unwrap().leaf_material(), Some(LeafMaterial { mix: 0.25, scale: 36.0 }));
    }

    #[test]
    fn typed_evaluation_settings() {
        let text = "[eval]\nsearch = \"selfplay\"\nladder = \"dai\"\nopenings = \"data/openings/shogi.txt\"\n";
        let c = TrainFileConfig::from_toml(text, "t").unwrap();
        assert_eq!(c.eval.search, EvalSearch::Selfplay);
        assert_eq!(c.eval.ladder, EvalLadder::Shipped(Variant::Dai));
        assert_eq!(c.eval.openings.as_deref(), Some(Path::new("data/openings/shogi.txt")));
        let d = TrainFileConfig::from_toml("", "t").unwrap();
        assert_eq!(
            (d.eval.ladder, d.eval.openings, d.eval.search),
            (EvalLadder::Shipped(Variant::Shogi), None, EvalSearch::Engine)
        );
        let ladder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../arena/ladder-sho.toml");
        let c = TrainFileConfig::from_toml(&format!("[eval]\nladder = {:?}\n", ladder.display().to_string()), "t");
        assert_eq!(c.unwrap().eval.ladder, EvalLadder::File(ladder));
    }

    #[test]
    fn old_flat_evaluation_keys_name_their_new_place() {
        for (old, new) in OLD_TRAIN_KEYS {
            let text = format!("variant = \"shogi\"\n[train]\nlr = 0.1\n{old} = 1\n");
            let e = TrainFileConfig::from_toml(&text, "old.toml").unwrap_err();
            assert!(matches!(&e, ConfigError::MovedKey { line: 4, .. }), "{old}: {e:?}");
            let m = e.to_string();
            assert!(
                m.starts_with("old.toml: line 4: `train.") && m.contains(&format!("`{new}` in the [eval] table")),
                "{m}"
            );
        }
    }

    #[test]
    fn out_of_range_values_name_field_value_and_range() {
        for (text, expected) in [
            ("[train]\ntrain_ratio = inf\n", "train.train_ratio = inf is out of range (valid: (0, 1000])"),
            ("[train]\npolicy_weight = nan\n", "train.policy_weight = NaN is out of range (valid: [0, 1000])"),
            ("[train]\nlr = -0.1\n", "train.lr = -0.1 is out of range (valid: (0, 10])"),
            ("[train]\nmax_minutes = inf\n", "train.max_minutes = inf"),
            ("[train]\nadam_eps = nan\n", "train.adam_eps = NaN"),
            ("[train]\nweight_decay = inf\n", "train.weight_decay = inf"),
            ("[train]\ngrad_clip = nan\n", "train.grad_clip = NaN"),
            ("[eval]\ngames = 0\n", "eval.games = 0 is out of range (valid: 1..=100000; eval.interval = 0"),
            ("[train]\npolicy_weight = 0.0\nvalue_weight = 0.0\n", "nothing to learn"),
            ("[train]\ndevice = \"cuda:x\"\n", "train.device"),
            ("[eval]\nopponents = [\"stockfish\"]\n", "eval.opponents = \"stockfish\""),
            ("[eval]\nat_end_points = 0\n", "eval.at_end_points = 0 is out of range (valid: 1..=1000)"),
            ("[eval]\nearly_games = 0\n", "eval.early_games = 0 is out of range"),
            ("[eval]\nladder_rungs = 0\n", "eval.ladder_rungs = 0 is out of range"),
            ("[eval]\nladder_start = \"fsf9\"\n", "eval.ladder_start = \"fsf9\""),
            ("[search]\nc_puct_base = inf\n", "search.c_puct_base = inf"),
            ("[train]\nreply_policy_weight = -1\n", "train.reply_policy_weight = -1 is out of range"),
            ("[train]\nmaterial_head_weight = nan\n", "train.material_head_weight = NaN"),
            ("[train]\nfuture_mix = 1.5\n", "train.future_mix = 1.5 is out of range (valid: [0, 1])"),
            ("[train]\nq_mix = 0.5\nfuture_mix = 0.75\n", "at most 1 - q_mix - material_mix = 0.5"),
            ("[train]\nmaterial_scale = 0\n", "train.material_scale = 0 is out of range (valid: [1, 1000])"),
        ] {
            let e = TrainFileConfig::from_toml(text, "t.toml").unwrap_err().to_string();
            assert!(e.starts_with("t.toml: ") && e.contains(expected), "{text}: {e}");
        }
        // The ladder opponent, its start and the points of the end.
        let c = "[eval]\nopponents = [\"ladder\", \"previous\"]\nladder_start = \"fsf1\"\nat_end_points = 4\nearly_games = 2\n";
        let c = TrainFileConfig::from_toml(c, "t").unwrap().eval;
        assert_eq!((c.games_for(false), c.games_for(true), c.at_end_points), (2, 40, 4));
        // No evaluation at all: zero games are fine.
        TrainFileConfig::from_toml("[eval]\ninterval = 0\ngames = 0\n", "t").unwrap();
    }

    #[test]
    fn material_search_is_static_or_quiescence() {
        assert_eq!(TrainFileConfig::from_toml("", "t").unwrap().train.material_search, MaterialSearch::Static);
        let c = TrainFileConfig::from_toml("[train]\nmaterial_search = \"quiescence\"\n", "t").unwrap();
        assert_eq!(c.train.material_search, MaterialSearch::Quiescence);
        for bad in ["\"deep\"", "\"Static\"", "1"] {
            let e = TrainFileConfig::from_toml(&format!("[train]\nmaterial_search = {bad}\n"), "t").unwrap_err();
            let m = e.to_string();
            assert!(m.contains("material_search") && m.contains("line 2"), "{bad}: {m}");
        }
        let e = TrainFileConfig::from_toml("[train]\nmaterial_search = \"deep\"\n", "t").unwrap_err();
        assert!(e.to_string().contains("expected `static` or `quiescence`"), "{e}");
    }

    #[test]
    fn shipped_configs_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                TrainFileConfig::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            }
        }
    }
}
