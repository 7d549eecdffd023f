//! Settings: the `[search]` and `[selfplay]` tables of a koma config file.
//!
//! A config file is TOML with a top-level `variant` and one table per part of the system:
//! `[model]` (`model::NetConfig`), `[search]` ([`SearchConfig`]), `[selfplay]`
//! ([`SelfplayConfig`]), `[train]` (the trainer's). [`SelfplayFileConfig`] reads the parts
//! self-play needs and **ignores other top-level tables** (such as `[train]`), so each
//! crate reads the same file; inside each table unknown fields are errors
//! (`deny_unknown_fields`), and every field has a default.

use std::path::Path;

use model::NetConfig;
use rules::Variant;
use search::SearchConfig;
use serde::{Deserialize, Deserializer, Serialize};

/// Self-play settings (`[selfplay]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Worker threads (rayon pool); 0 = one per CPU core. Default 0.
    pub workers: usize,
    /// Games each worker plays at once; the leaves of all of them go to the batcher as one
    /// request. Default 64. (KataGo: `numSearchThreads` x games; dlshogi: 2 x 128.)
    pub games_per_worker: usize,
    /// Simulations of a full search. Default 800. AlphaZero: 800; KataGo: 600
    /// (1000 later); Gumbel AlphaZero: 16..200.
    pub simulations_full: u32,
    /// Simulations of a cheap search (playout cap randomization). Default 100. KataGo: 100.
    pub simulations_cheap: u32,
    /// Fraction of moves that get a full search and a policy target; the rest get a
    /// cheap search (KataGo's playout cap randomization). Default 0.25. KataGo: 0.25;
    /// 1.0 = AlphaZero (every move full).
    pub full_search_fraction: f64,
    /// PUCT root only: temperature of the move choice (visit counts ^ (1/T)) for the
    /// first `temperature_plies` plies. Default 1.0. AlphaZero: 1.0 for the first 30
    /// plies. With `search.gumbel = true` the move is the sequential halving winner (its
    /// Gumbel noise is the exploration, as in Danihelka et al. 2022) and setting any of
    /// the three temperature fields is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_start: Option<f32>,
    /// PUCT root only: temperature after `temperature_plies`; 0 = most visited move.
    /// Default 0.0. AlphaZero: 0 (infinitesimal); KataGo: ~0.2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_end: Option<f32>,
    /// PUCT root only: see above. Default 30. AlphaZero: 30.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_plies: Option<u32>,
    /// Resign when the root value (win - loss, in [-1, 1], mover's view) of the mover's
    /// full or cheap search is below this for `resign_consecutive` of its moves in a row.
    /// Default -0.95; -1 or below never resigns. AlphaZero: set so that false positives
    /// stay under 5%; lc0: -0.9 ish (resign at 5% win).
    pub resign_threshold: f32,
    /// Consecutive moves below the threshold before resigning. Default 3.
    pub resign_consecutive: u32,
    /// Fraction of games that never resign; in them a would-be resignation is recorded
    /// and checked against the final result (the false-resign rate in the summary).
    /// Default 0.1. AlphaGo Zero: 0.1.
    pub no_resign_fraction: f64,
    /// A game longer than this many plies is a draw. Default 512. dlshogi: 320 (512 in
    /// later runs); Floodgate: 256 moves.
    pub max_plies: u32,
    /// Uniformly random plies played at the start of every game (opening variety); they
    /// are not recorded as samples. Default 0.
    pub random_opening_plies: u32,
    /// Optional opening file: one start position per line (`startpos`, `sfen ...`, either
    /// followed by `moves ...`, or a bare SFEN); `#` starts a comment. Games start from
    /// lines taken at random, then play `random_opening_plies` random plies. Default none.
    pub opening_file: Option<String>,
    /// Samples per chunk file. Default 4096.
    pub samples_per_chunk: usize,
    /// Largest forward pass of the batcher, in positions; 0 = workers x games_per_worker.
    /// Default 0.
    pub max_batch: usize,
    /// Longest wait of the batcher for more requests once one arrived, microseconds.
    /// Default 1000.
    pub max_wait_us: u64,
    /// Torch device of the network: `cpu`, `cuda`, `cuda:N`. Default `cpu`.
    pub device: String,
    /// libtorch intra-op threads; 0 = leave libtorch's default. Default 0.
    pub torch_threads: usize,
    /// Seed of the self-play random numbers; 0 = from the clock. Default 0.
    pub seed: u64,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            workers: 0,
            games_per_worker: 64,
            simulations_full: 800,
            simulations_cheap: 100,
            full_search_fraction: 0.25,
            temperature_start: None,
            temperature_end: None,
            temperature_plies: None,
            resign_threshold: -0.95,
            resign_consecutive: 3,
            no_resign_fraction: 0.1,
            max_plies: 512,
            random_opening_plies: 0,
            opening_file: None,
            samples_per_chunk: 4096,
            max_batch: 0,
            max_wait_us: 1000,
            device: "cpu".to_string(),
            torch_threads: 0,
            seed: 0,
        }
    }
}

impl SelfplayConfig {
    /// The move temperature at `ply` plies into the game (PUCT root).
    pub fn temperature_at(&self, ply: usize) -> f32 {
        if ply < self.temperature_plies.unwrap_or(30) as usize {
            self.temperature_start.unwrap_or(1.0)
        } else {
            self.temperature_end.unwrap_or(0.0)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

fn de_variant<'de, D: Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

fn default_variant() -> Variant {
    Variant::Shogi
}

/// The parts of a koma config file that self-play reads. Other top-level tables
/// (`[train]`, ...) are ignored here (other crates read them).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SelfplayFileConfig {
    /// `shogi`, `sho` or `dai`. Default `shogi`.
    #[serde(default = "default_variant", deserialize_with = "de_variant")]
    pub variant: Variant,
    /// The network (`model::NetConfig`); also accepted as `[net]`.
    #[serde(default, alias = "net")]
    pub model: NetConfig,
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
}

impl Default for SelfplayFileConfig {
    fn default() -> Self {
        SelfplayFileConfig {
            variant: Variant::Shogi,
            model: NetConfig::default(),
            search: SearchConfig::default(),
            selfplay: SelfplayConfig::default(),
        }
    }
}

impl SelfplayFileConfig {
    pub fn from_toml(text: &str, path: &str) -> Result<Self, ConfigError> {
        let cfg: SelfplayFileConfig =
            toml::from_str(text).map_err(|e| ConfigError::Parse { path: path.to_string(), message: e.to_string() })?;
        cfg.validate().map_err(|message| ConfigError::Invalid { path: path.to_string(), message })?;
        Ok(cfg)
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: p.clone(), source })?;
        Self::from_toml(&text, &p)
    }

    /// Range checks.
    pub fn validate(&self) -> Result<(), String> {
        self.model.validate().map_err(|e| format!("model: {e}"))?;
        let s = &self.search;
        let sp = &self.selfplay;
        let check = |ok: bool, msg: &str| if ok { Ok(()) } else { Err(msg.to_string()) };
        check(s.c_puct > 0.0 && s.c_puct.is_finite(), "search.c_puct must be positive")?;
        check(s.c_puct_base > 0.0, "search.c_puct_base must be positive")?;
        check(s.fpu_reduction >= 0.0 && s.root_fpu_reduction >= 0.0, "search fpu reductions must be >= 0")?;
        check(s.dirichlet_alpha_total > 0.0, "search.dirichlet_alpha_total must be positive")?;
        check((0.0..=1.0).contains(&s.dirichlet_epsilon), "search.dirichlet_epsilon must be in [0, 1]")?;
        check(s.policy_softmax_temperature > 0.0, "search.policy_softmax_temperature must be positive")?;
        check(s.gumbel_m >= 1, "search.gumbel_m must be at least 1")?;
        check(s.gumbel_c_visit >= 0.0 && s.gumbel_c_scale >= 0.0, "search gumbel constants must be >= 0")?;
        check(matches!(s.mate_search_plies, 0 | 1 | 3), "search.mate_search_plies must be 0, 1 or 3")?;
        check(s.virtual_loss >= 0.0, "search.virtual_loss must be >= 0")?;
        check(s.max_tree_mib >= 1, "search.max_tree_mib must be at least 1")?;
        check(sp.games_per_worker >= 1, "selfplay.games_per_worker must be at least 1")?;
        check(sp.simulations_full >= 1 && sp.simulations_cheap >= 1, "selfplay simulations must be at least 1")?;
        check((0.0..=1.0).contains(&sp.full_search_fraction), "selfplay.full_search_fraction must be in [0, 1]")?;
        check((0.0..=1.0).contains(&sp.no_resign_fraction), "selfplay.no_resign_fraction must be in [0, 1]")?;
        check(
            sp.temperature_start.unwrap_or(0.0) >= 0.0 && sp.temperature_end.unwrap_or(0.0) >= 0.0,
            "selfplay temperatures must be >= 0",
        )?;
        check(
            !s.gumbel || (sp.temperature_start, sp.temperature_end, sp.temperature_plies) == (None, None, None),
            "selfplay.temperature_start, temperature_end and temperature_plies are not used with \
             search.gumbel = true (the Gumbel root samples its move by sequential halving): remove them",
        )?;
        check(sp.max_plies >= 1, "selfplay.max_plies must be at least 1")?;
        check(sp.samples_per_chunk >= 1, "selfplay.samples_per_chunk must be at least 1")?;
        check(sp.resign_consecutive >= 1, "selfplay.resign_consecutive must be at least 1")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_with_extra_tables_loads() {
        let text = r#"
variant = "sho"
[model]
blocks = 2
channels = 16
[search]
gumbel = true
[selfplay]
simulations_full = 32
[train]
lr = 0.1
"#;
        let c = SelfplayFileConfig::from_toml(text, "t.toml").unwrap();
        assert_eq!(c.variant, Variant::Sho);
        assert_eq!(c.model.blocks, 2);
        assert!(c.search.gumbel);
        assert_eq!(c.selfplay.simulations_full, 32);
        assert_eq!(c.selfplay.simulations_cheap, 100);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = SelfplayFileConfig::from_toml("[search]\ncpuct = 1\n", "t.toml").unwrap_err();
        assert!(e.to_string().contains("cpuct"), "{e}");
        let e = SelfplayFileConfig::from_toml("variant = \"chess\"\n", "t.toml").unwrap_err();
        assert!(e.to_string().contains("chess"), "{e}");
    }

    /// A Gumbel root chooses its move by sequential halving (its Gumbel noise is the
    /// exploration): a move temperature set with it would be silently ignored.
    #[test]
    fn gumbel_rejects_the_move_temperature() {
        for field in ["temperature_start = 1.0", "temperature_end = 0.2", "temperature_plies = 30"] {
            let text = format!("[search]\ngumbel = true\n[selfplay]\n{field}\n");
            let e = SelfplayFileConfig::from_toml(&text, "t.toml").unwrap_err();
            assert!(e.to_string().contains("temperature") && e.to_string().contains("gumbel"), "{e}");
        }
        let c = SelfplayFileConfig::from_toml("[selfplay]\ntemperature_plies = 12\n", "t.toml").unwrap();
        assert_eq!((c.selfplay.temperature_at(11), c.selfplay.temperature_at(12)), (1.0, 0.0));
    }

    #[test]
    fn shipped_configs_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        for (name, v) in [("shogi-tiny", Variant::Shogi), ("sho-tiny", Variant::Sho), ("dai-tiny", Variant::Dai)] {
            let c = SelfplayFileConfig::load(dir.join(format!("{name}.toml"))).unwrap();
            assert_eq!(c.variant, v);
        }
    }
}
