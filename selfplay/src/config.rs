//! Settings: the `[search]` and `[selfplay]` tables of a koma config file.
//!
//! A config file is TOML with a top-level `variant` and one table per part of the system:
//! `[model]` (`model::NetConfig`), `[search]` ([`SearchConfig`]), `[selfplay]`
//! ([`SelfplayConfig`]), `[train]` (the trainer's). [`SelfplayFileConfig`] reads the parts
//! self-play needs; the trainer reads `[train]` from the same file. Unknown keys are
//! errors at every level: a top-level key outside [`TOP_LEVEL_KEYS`] (a typo `[trian]`),
//! and unknown fields inside each table (`deny_unknown_fields`). Every field has a
//! default and a documented valid range, checked when the file is read: the error names
//! the field, the value and the range (NaN and the infinities are never valid).

use std::path::Path;

use model::NetConfig;
use rules::Variant;
use search::SearchConfig;
use serde::{Deserialize, Deserializer, Serialize};

/// Self-play settings (`[selfplay]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Worker threads (rayon pool); 0 = one per CPU core. Default 0. Valid: 0..=1024.
    pub workers: usize,
    /// Games each worker plays at once; the leaves of all of them go to the batcher as one
    /// request. Default 64. (KataGo: `numSearchThreads` x games; dlshogi: 2 x 128.)
    /// Valid: 1..=65536.
    pub games_per_worker: usize,
    /// Simulations of a full search. Default 800. AlphaZero: 800; KataGo: 600
    /// (1000 later); Gumbel AlphaZero: 16..200. Valid: 1..=1000000.
    pub simulations_full: u32,
    /// Simulations of a cheap search (playout cap randomization). Default 100. KataGo: 100.
    /// Valid: 1..=1000000.
    pub simulations_cheap: u32,
    /// Fraction of moves that get a full search and a policy target; the rest get a
    /// cheap search (KataGo's playout cap randomization). Default 0.25. KataGo: 0.25;
    /// 1.0 = AlphaZero (every move full). Valid: [0, 1].
    pub full_search_fraction: f64,
    /// PUCT root only: temperature of the move choice (visit counts ^ (1/T)) for the
    /// first `temperature_plies` plies. Default 1.0. AlphaZero: 1.0 for the first 30
    /// plies. Valid: [0, 100]. With `search.gumbel = true` the move is the sequential halving winner (its
    /// Gumbel noise is the exploration, as in Danihelka et al. 2022) and setting any of
    /// the three temperature fields is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_start: Option<f32>,
    /// PUCT root only: temperature after `temperature_plies`; 0 = most visited move.
    /// Default 0.0. AlphaZero: 0 (infinitesimal); KataGo: ~0.2. Valid: [0, 100].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_end: Option<f32>,
    /// PUCT root only: see above. Default 30. AlphaZero: 30. Valid: 0..=100000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_plies: Option<u32>,
    /// Resign when the root value (win - loss, in [-1, 1], mover's view) of the mover's
    /// full or cheap search is below this for `resign_consecutive` of its moves in a row.
    /// Default -0.95; -1 never resigns. AlphaZero: set so that false positives
    /// stay under 5%; lc0: -0.9 ish (resign at 5% win). Valid: [-1, 1]. With
    /// `resign_false_rate` the threshold is calibrated and this is its ceiling.
    pub resign_threshold: f32,
    /// Calibrate the threshold from the no-resign games (`crate::resign`): the highest
    /// one, up to `resign_threshold`, at which at most this share of the resignations it
    /// would have made in the played-out games were false (the side did not lose);
    /// nothing resigns until 40 such games are in.
    /// Default 0 (a fixed `resign_threshold`). AlphaGo Zero: 0.05. Valid: [0, 0.5];
    /// above 0 needs `no_resign_fraction` above 0.
    pub resign_false_rate: f64,
    /// Consecutive moves below the threshold before resigning. Default 3. Valid: 1..=10000.
    pub resign_consecutive: u32,
    /// Fraction of games that never resign; in them a would-be resignation is recorded
    /// and checked against the final result (the false-resign rate in the summary).
    /// Default 0.1. AlphaGo Zero: 0.1. Valid: [0, 1].
    pub no_resign_fraction: f64,
    /// A game longer than this many plies is a draw (but see `cap_adjudication_margin`).
    /// Default 512. dlshogi: 320 (512 in later runs); Floodgate: 256 moves.
    /// Valid: 1..=100000.
    pub max_plies: u32,
    /// Above 0, a game cut at `max_plies` is won by the side ahead by at least this much
    /// material after the captures on offer (`rules::quiescent_balance`: pawn 1, gold 6,
    /// rook 10), and a draw only when neither is (`crate::adjudicate`). Knowledge from
    /// the rules, not zero knowledge: for variants whose early games mostly reach the cap
    /// (dai), where every cut game would otherwise teach the value a draw. Default 0
    /// (cut games are draws). Valid: [0, 1000].
    pub cap_adjudication_margin: f32,
    /// Uniformly random plies played at the start of every game (opening variety); they
    /// are not recorded as samples. Default 0. Valid: 0..=10000.
    pub random_opening_plies: u32,
    /// Optional opening file (`dataio::openings`, the format of `data/openings/README.md`:
    /// one opening per line, `startpos`, `sfen ...`, either followed by `moves ...`, or a
    /// bare SFEN; `#` starts a comment). Games start from openings taken at random, then
    /// play `random_opening_plies` random plies. Default none.
    /// The file must exist when the config is read.
    pub opening_file: Option<String>,
    /// Samples per chunk file. Default 4096. Valid: 1..=1000000.
    pub samples_per_chunk: usize,
    /// Horizon of every sample's future WDL (`dataio::AuxTargets::future_wdl`, the
    /// learner's `train.future_mix`): the search's root WDL this many plies later in the
    /// game. Default 6. KataGo's short-term value targets look about 6 and 16 turns ahead
    /// (Wu 2019, "Accelerating Self-Play Learning in Go", 4.2). Valid: 1..=1000.
    pub future_plies: u32,
    /// Largest forward pass of the batcher, in positions; 0 = the positions one round of
    /// every worker's groups sends, workers x games_per_worker / batches_in_flight
    /// (rounded up). Default 0. Valid: 0..=65536.
    pub max_batch: usize,
    /// Requests each worker keeps out at once (double buffering): its games are split into
    /// this many groups, and while the network evaluates one group's leaves the worker
    /// selects the next group's, so tree work and forward passes overlap. 1 = the worker
    /// waits for each evaluation. Default 2. Valid: 1..=8.
    pub batches_in_flight: usize,
    /// Longest wait of the batcher for more requests once one arrived, microseconds.
    /// Default 1000. Valid: 0..=10000000 (10 s).
    pub max_wait_us: u64,
    /// Torch device of the network: `cpu`, `cuda`, `cuda:N` (also `gpu`, `auto`). Default
    /// `cpu`.
    pub device: String,
    /// libtorch intra-op threads; 0 = half the cores on machines of up to 8 cores (the
    /// learner or the tree search has the other half), else libtorch's default. Default
    /// 0. Valid: 0..=1024.
    pub torch_threads: usize,
    /// Seed of the self-play random numbers; 0 = from the clock. Default 0. Any u64.
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
            resign_false_rate: 0.0,
            resign_consecutive: 3,
            no_resign_fraction: 0.1,
            max_plies: 512,
            cap_adjudication_margin: 0.0,
            random_opening_plies: 0,
            opening_file: None,
            samples_per_chunk: 4096,
            future_plies: 6,
            max_batch: 0,
            batches_in_flight: 2,
            max_wait_us: 1000,
            device: "cpu".to_string(),
            torch_threads: 0,
            seed: 0,
        }
    }
}

impl SelfplayConfig {
    /// Worker threads: `workers`, or the machine's cores when 0.
    pub fn worker_count(&self) -> usize {
        if self.workers == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.workers
        }
    }

    /// The batcher's `max_batch`: the configured one, or (0) the positions every worker
    /// sends per group, `workers x games_per_worker / batches_in_flight` rounded up, so
    /// that one group from each worker fills a batch while the other groups are selected.
    pub fn effective_max_batch(&self) -> usize {
        if self.max_batch > 0 {
            return self.max_batch;
        }
        let groups = self.batches_in_flight.clamp(1, self.games_per_worker.max(1));
        (self.worker_count() * self.games_per_worker).div_ceil(groups).max(1)
    }

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

/// Every top-level key of a koma config file, whichever program reads it: `variant`,
/// `[model]` (also spelt `[net]`), `[search]`, `[selfplay]`, `[train]`, `[eval]`.
pub const TOP_LEVEL_KEYS: &[&str] = &["variant", "model", "net", "search", "selfplay", "train", "eval"];

/// A top-level key that no part of koma reads.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown top-level key `{0}` (a koma config has `variant` and the tables [model], [search], \
     [selfplay], [train] and [eval])"
)]
pub struct UnknownTopLevelKey(pub String);

/// Why a config file's top level is refused: not TOML, or a key no part of koma reads.
#[derive(Debug, thiserror::Error)]
pub enum TopLevelError {
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    #[error(transparent)]
    Unknown(#[from] UnknownTopLevelKey),
}

/// Why a config's values are refused.
#[derive(Debug, thiserror::Error)]
pub enum InvalidConfig {
    /// A field out of its range.
    #[error(transparent)]
    Field(#[from] model::ConfigError),
    #[error(
        "selfplay.temperature_start, temperature_end and temperature_plies are not used with \
         search.gumbel = true (the Gumbel root samples its move by sequential halving): remove them"
    )]
    TemperatureWithGumbel,
}

/// Refuses a top-level key that no part of koma reads.
pub fn check_top_level_keys(text: &str) -> Result<(), TopLevelError> {
    let table: toml::Table = text.parse()?;
    Ok(check_top_level_names(table.keys().map(String::as_str))?)
}

/// [`check_top_level_keys`] of keys already read.
pub fn check_top_level_names<'a>(mut keys: impl Iterator<Item = &'a str>) -> Result<(), UnknownTopLevelKey> {
    match keys.find(|k| !TOP_LEVEL_KEYS.contains(k)) {
        None => Ok(()),
        Some(k) => Err(UnknownTopLevelKey(k.to_string())),
    }
}

impl SelfplayFileConfig {
    pub fn from_toml(text: &str, path: &str) -> Result<Self, ConfigError> {
        let parse_error = |message: String| ConfigError::Parse { path: path.to_string(), message };
        check_top_level_keys(text).map_err(|e| parse_error(e.to_string()))?;
        let cfg: SelfplayFileConfig = toml::from_str(text).map_err(|e| parse_error(e.to_string()))?;
        cfg.validate().map_err(|e| ConfigError::Invalid { path: path.to_string(), message: e.to_string() })?;
        Ok(cfg)
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: p.clone(), source })?;
        Self::from_toml(&text, &p)
    }

    /// Range checks of `[model]`, `[search]` and `[selfplay]`.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        self.model.validate()?;
        self.search.validate()?;
        self.selfplay.validate()?;
        let sp = &self.selfplay;
        if self.search.gumbel && (sp.temperature_start, sp.temperature_end, sp.temperature_plies) != (None, None, None)
        {
            return Err(InvalidConfig::TemperatureWithGumbel);
        }
        Ok(())
    }
}

impl SelfplayConfig {
    /// Checks every field against its valid range (in the field's documentation).
    pub fn validate(&self) -> Result<(), model::ConfigError> {
        use model::{check_real, check_whole, Range};
        let whole = |name: &str, v: u64, min: u64, max: u64| check_whole(&format!("selfplay.{name}"), v, min, max);
        let real = |name: &str, v: f64, r: Range| check_real(&format!("selfplay.{name}"), v, r);
        let real32 = |name: &str, v: f32, r: Range| check_real(&format!("selfplay.{name}"), v, r);
        whole("workers", self.workers as u64, 0, 1024)?;
        whole("games_per_worker", self.games_per_worker as u64, 1, 65536)?;
        whole("simulations_full", self.simulations_full as u64, 1, 1_000_000)?;
        whole("simulations_cheap", self.simulations_cheap as u64, 1, 1_000_000)?;
        real("full_search_fraction", self.full_search_fraction, Range::Closed(0.0, 1.0))?;
        real32("temperature_start", self.temperature_start.unwrap_or(1.0), Range::Closed(0.0, 100.0))?;
        real32("temperature_end", self.temperature_end.unwrap_or(0.0), Range::Closed(0.0, 100.0))?;
        whole("temperature_plies", self.temperature_plies.unwrap_or(30) as u64, 0, 100_000)?;
        real32("resign_threshold", self.resign_threshold, Range::Closed(-1.0, 1.0))?;
        whole("resign_consecutive", self.resign_consecutive as u64, 1, 10_000)?;
        real("no_resign_fraction", self.no_resign_fraction, Range::Closed(0.0, 1.0))?;
        real("resign_false_rate", self.resign_false_rate, Range::Closed(0.0, 0.5))?;
        if self.resign_false_rate > 0.0 && self.no_resign_fraction == 0.0 {
            return Err(model::ConfigError::BadValue {
                field: "selfplay.resign_false_rate".into(),
                value: self.resign_false_rate.to_string(),
                expected: "0 when no_resign_fraction is 0 (the calibration reads the no-resign games)".into(),
            });
        }
        whole("max_plies", self.max_plies as u64, 1, 100_000)?;
        real32("cap_adjudication_margin", self.cap_adjudication_margin, Range::Closed(0.0, 1000.0))?;
        whole("random_opening_plies", self.random_opening_plies as u64, 0, 10_000)?;
        whole("samples_per_chunk", self.samples_per_chunk as u64, 1, 1_000_000)?;
        whole("future_plies", self.future_plies as u64, 1, 1000)?;
        whole("max_batch", self.max_batch as u64, 0, 65536)?;
        whole("batches_in_flight", self.batches_in_flight as u64, 1, 8)?;
        whole("max_wait_us", self.max_wait_us, 0, 10_000_000)?;
        model::check_device_name("selfplay.device", &self.device)?;
        whole("torch_threads", self.torch_threads as u64, 0, 1024)?;
        if let Some(f) = &self.opening_file {
            if !Path::new(f).is_file() {
                return Err(model::ConfigError::BadValue {
                    field: "selfplay.opening_file".into(),
                    value: f.clone(),
                    expected: "an existing file of openings".into(),
                });
            }
        }
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
        for typo in ["[trian]\nlr = 0.1\n", "[Search]\n", "varient = \"sho\"\n", "seed = 3\n"] {
            let e = SelfplayFileConfig::from_toml(typo, "t.toml").unwrap_err().to_string();
            assert!(e.contains("unknown top-level key"), "{typo}: {e}");
        }
    }

    #[test]
    fn out_of_range_values_name_field_value_and_range() {
        for (text, expected) in [
            ("[search]\nc_puct_base = inf\n", "search.c_puct_base = inf is out of range (valid: [1, 1000000000])"),
            ("[search]\ndirichlet_alpha_total = nan\n", "search.dirichlet_alpha_total = NaN is out of range (valid: (0, 1000])"),
            ("[search]\nvirtual_loss = -inf\n", "search.virtual_loss = -inf is out of range"),
            ("[search]\npolicy_softmax_temperature = 1e-30\n", "search.policy_softmax_temperature = 0.000000000000000000000000000001 is out of range (valid: [0.01, 100])"),
            ("[search]\nleaf_material_mix = 1.5\n", "search.leaf_material_mix = 1.5 is out of range (valid: [0, 1])"),
            ("[search]\nleaf_material_scale = 0\n", "search.leaf_material_scale = 0 is out of range (valid: [1, 1000])"),
            ("[selfplay]\ntemperature_start = inf\n", "selfplay.temperature_start = inf"),
            ("[selfplay]\nresign_threshold = nan\n", "selfplay.resign_threshold = NaN"),
            ("[selfplay]\nresign_false_rate = 0.6\n", "selfplay.resign_false_rate = 0.6 is out of range (valid: [0, 0.5])"),
            ("[selfplay]\nresign_false_rate = 0.05\nno_resign_fraction = 0\n", "0 when no_resign_fraction is 0"),
            ("[selfplay]\ntorch_threads = 100000\n", "selfplay.torch_threads = 100000 is out of range (valid: 0..=1024)"),
            ("[selfplay]\ndevice = \"cdua\"\n", "selfplay.device = \"cdua\""),
            ("[selfplay]\nopening_file = \"/nonexistent/openings.txt\"\n", "selfplay.opening_file"),
            ("[model]\nchannels = 0\n", "model.channels = 0 is out of range (valid: 1..=4096)"),
        ] {
            let e = SelfplayFileConfig::from_toml(text, "t.toml").unwrap_err().to_string();
            assert!(e.contains(expected), "{text}: {e}");
        }
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
