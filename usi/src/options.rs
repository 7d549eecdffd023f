//! The engine's options, shared by USI (`setoption`) and XBoard (`option`).

use nn::LeafMaterial;
use rules::Variant;
use search::SearchConfig;

/// Type and default of an option, as the protocols announce it.
#[derive(Clone, Copy, Debug)]
pub enum OptionKind {
    Check(bool),
    Spin {
        default: i64,
        min: i64,
        max: i64,
    },
    Text(&'static str),
    /// A file name (USI `filename`, XBoard `-file`): GUIs offer a file chooser.
    File(&'static str),
    /// One of `vars` (exactly as written, case aside).
    Combo {
        default: &'static str,
        vars: &'static [&'static str],
    },
}

#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
}

/// The value Shogidokoro sends for a string option left empty (USI's `<empty>`): read
/// as the empty string.
pub const EMPTY: &str = "<empty>";

/// Value of `ModelFile` that selects the uniform evaluator (every move equally likely,
/// value 0): pure MCTS, for tests and baselines.
pub const UNIFORM: &str = "<uniform>";

const fn spin(name: &'static str, default: i64, min: i64, max: i64) -> OptionSpec {
    OptionSpec { name, kind: OptionKind::Spin { default, min, max } }
}

/// Every option, in the order `usi` lists them.
pub const SPECS: &[OptionSpec] = &[
    OptionSpec { name: "ModelFile", kind: OptionKind::File("auto") },
    OptionSpec { name: "Device", kind: OptionKind::Text("auto") },
    // Which backend evaluates the network (`nn::Backend`): auto takes libtorch on a GPU and
    // the faster one, the portable CPU backend, on the CPU.
    OptionSpec { name: "Backend", kind: OptionKind::Combo { default: "auto", vars: &nn::Backend::NAMES } },
    // 0 (the default): auto, by the device ([`Options::search_threads`],
    // [`Options::leaves_per_batch`]).
    spin("Threads", 0, 0, 256),
    spin("BatchSize", 0, 0, 4096),
    spin("TorchThreads", 0, 0, 1024),
    spin("USI_Hash", 1024, 16, 1 << 20),
    OptionSpec { name: "USI_Ponder", kind: OptionKind::Check(false) },
    spin("MultiPV", 1, 1, 64),
    spin("ByoyomiMargin", 100, 0, 60_000),
    // YaneuraOu's time options (`search::time::TimeOptions`). The two delays default to 0
    // here (YaneuraOu: 120 and 1120): ByoyomiMargin is kept back from every budget, and
    // each delay counts only where it is larger.
    spin("NetworkDelay", 0, 0, 60_000),
    spin("NetworkDelay2", 0, 0, 60_000),
    spin("MinimumThinkingTime", 2000, 0, 3_600_000),
    spin("SlowMover", 100, 1, 1000),
    spin("NodesLimit", 0, 0, 1 << 40),
    spin("ResignValue", 0, 0, 1000),
    OptionSpec { name: "UCI_Variant", kind: OptionKind::Combo { default: "shogi", vars: &["shogi", "sho", "dai"] } },
    // YaneuraOu's name; `MaxPlies` (its old name here) is taken as an alias.
    spin("MaxMovesToDraw", 0, 0, 1_000_000),
    // YaneuraOu's entering king rules (`rules::ImpasseRule`), less its handicap variants.
    OptionSpec {
        name: "EnteringKingRule",
        kind: OptionKind::Combo { default: "CSARule27", vars: &rules::ImpasseRule::ENTERING_KING_NAMES },
    },
    // dlshogi's: what a draw is worth to the engine, in thousandths of a win, when it plays
    // black (sente) or white (gote) ([`Options::draw_values`]).
    spin("Draw_Value_Black", 500, 0, 1000),
    spin("Draw_Value_White", 500, 0, 1000),
    // The opening book (`crate::book`): YaneuraOu's text book, with YaneuraOu's option
    // names (`USI_OwnBook` is what ShogiGUI sends for "use the engine's book").
    OptionSpec { name: "USI_OwnBook", kind: OptionKind::Check(true) },
    OptionSpec { name: "BookFile", kind: OptionKind::File(EMPTY) },
    spin("BookMoves", 16, 0, 10_000),
    spin("BookEvalDiff", 30, 0, 99_999),
    spin("BookEvalBlackLimit", 0, -99_999, 99_999),
    spin("BookEvalWhiteLimit", -140, -99_999, 99_999),
    spin("BookDepthLimit", 0, 0, 99_999),
    OptionSpec { name: "ConsiderBookMoveCount", kind: OptionKind::Check(false) },
    spin("InfoInterval", 1000, 0, 3_600_000),
    // An `info string` after each search with its forward passes: how many, leaves per
    // pass, the collisions that cut batches short (for tuning Threads and BatchSize).
    OptionSpec { name: "SearchStats", kind: OptionKind::Check(false) },
    // Hundredths of `search::PLAY_C_PUCT`, the players' default (self-play uses 1.25).
    spin("CPuct", 80, 1, 10_000),
    spin("CPuctBase", 19652, 1, 1_000_000_000),
    spin("FpuReduction", 25, 0, 1000),
    spin("RootFpuReduction", 0, 0, 1000),
    spin("PolicySoftmaxTemp", 100, 1, 1000),
    spin("VirtualLoss", 100, 0, 10_000),
    // A combo: the tree takes 0, 1 or 3 (`search::SearchConfig::mate_search_plies`).
    OptionSpec { name: "MateSearchPlies", kind: OptionKind::Combo { default: "3", vars: &["0", "1", "3"] } },
    spin("MateHash", 256, 1, 1 << 16),
    // Percent of a leaf's value from the rules' material (`SearchConfig::leaf_material_mix`);
    // the scale in material units (`leaf_material_scale`). -1 (the default): auto, the
    // setting the loaded network was trained with (`model::LeafMaterial`), else 0 and 6.
    spin("MaterialMix", AUTO, AUTO, 100),
    spin("MaterialScale", AUTO, AUTO, MAX_MATERIAL_SCALE),
    // Plies at which the leaf material's capture search also tries quiet checks
    // (`leaf_material_check_plies`).
    spin("MaterialCheckPlies", 0, 0, 4),
    // The root's checks once the search has chosen: the tsume solver's nodes against a
    // mate by checks (`root_mate_nodes`), and the material check's plies and margin in
    // hundredths of material units (`root_tactics_plies`, `root_tactics_margin`).
    spin("RootMateNodes", 20_000, 0, 10_000_000),
    // The tsume solver's nodes at every new leaf of the tree (`leaf_mate_nodes`).
    spin("LeafMateNodes", 0, 0, 1_000_000),
    spin("RootTactics", 3, 0, 4),
    spin("RootTacticsMargin", 300, 0, 100_000),
];

/// `MaterialMix` and `MaterialScale`: take the loaded network's own setting.
pub const AUTO: i64 = -1;

/// The smallest `MaterialScale` besides [`AUTO`] (`SearchConfig::leaf_material_scale`'s range).
const MIN_MATERIAL_SCALE: i64 = 1;
const MAX_MATERIAL_SCALE: i64 = 1000;

/// What a changed option affects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The network must be (re)loaded: ModelFile, Device, Backend, TorchThreads.
    Network,
    /// Another game: the variant (network, position and tree).
    Variant,
    /// The search tree's settings (search constants, USI_Hash, MaxMovesToDraw,
    /// EnteringKingRule).
    Tree,
    Other,
}

/// Current option values.
#[derive(Clone, Debug)]
pub struct Options {
    pub model_file: String,
    pub device: String,
    pub backend: nn::Backend,
    pub threads: usize,
    pub batch_size: usize,
    pub torch_threads: usize,
    pub hash_mib: usize,
    pub ponder: bool,
    pub multipv: usize,
    pub margin_ms: u64,
    /// `NetworkDelay`, `NetworkDelay2`, `MinimumThinkingTime` (ms) and `SlowMover` (%).
    pub network_delay_ms: u64,
    pub network_delay2_ms: u64,
    pub minimum_thinking_ms: u64,
    pub slow_mover: u64,
    pub nodes_limit: u64,
    pub resign_value: u32,
    pub variant: Variant,
    /// `MaxMovesToDraw` (alias `MaxPlies`): plies at which the game is a draw; 0: none.
    pub max_plies: u32,
    /// `EnteringKingRule`.
    pub entering_king_rule: rules::ImpasseRule,
    /// `Draw_Value_Black`, `Draw_Value_White`: thousandths of a win.
    pub draw_value_black: u32,
    pub draw_value_white: u32,
    /// The opening book's options.
    pub book: crate::book::BookOptions,
    pub info_interval_ms: u64,
    pub search_stats: bool,
    pub c_puct: i64,
    pub c_puct_base: i64,
    pub fpu_reduction: i64,
    pub root_fpu_reduction: i64,
    pub policy_softmax_temp: i64,
    pub virtual_loss: i64,
    pub mate_search_plies: i64,
    /// `MateHash`: the tsume solver's table (`go mate`) in MiB; default 256, 1..=65536.
    pub mate_hash_mib: usize,
    /// `MaterialMix`: percent, or [`AUTO`] (the network's).
    pub material_mix: i64,
    /// `MaterialScale`: material units, or [`AUTO`] (the network's).
    pub material_scale: i64,
    pub material_check_plies: i64,
    pub root_mate_nodes: i64,
    pub leaf_mate_nodes: i64,
    pub root_tactics: i64,
    /// `RootTacticsMargin`: hundredths of material units.
    pub root_tactics_margin: i64,
}

impl Default for Options {
    fn default() -> Self {
        let mut o = Options {
            model_file: String::new(),
            device: String::new(),
            backend: nn::Backend::Auto,
            threads: 0,
            batch_size: 0,
            torch_threads: 0,
            hash_mib: 0,
            ponder: false,
            multipv: 0,
            margin_ms: 0,
            network_delay_ms: 0,
            network_delay2_ms: 0,
            minimum_thinking_ms: 0,
            slow_mover: 0,
            nodes_limit: 0,
            resign_value: 0,
            variant: Variant::Shogi,
            max_plies: 0,
            entering_king_rule: rules::ImpasseRule::Declaration27,
            draw_value_black: 0,
            draw_value_white: 0,
            book: crate::book::BookOptions::default(),
            info_interval_ms: 0,
            search_stats: false,
            c_puct: 0,
            c_puct_base: 0,
            fpu_reduction: 0,
            root_fpu_reduction: 0,
            policy_softmax_temp: 0,
            virtual_loss: 0,
            mate_search_plies: 0,
            mate_hash_mib: 0,
            material_mix: 0,
            material_scale: 0,
            material_check_plies: 0,
            root_mate_nodes: 0,
            leaf_mate_nodes: 0,
            root_tactics: 0,
            root_tactics_margin: 0,
        };
        for spec in SPECS {
            let v = match spec.kind {
                OptionKind::Check(b) => b.to_string(),
                OptionKind::Spin { default, .. } => default.to_string(),
                OptionKind::Text(t) | OptionKind::File(t) => t.to_string(),
                OptionKind::Combo { default, .. } => default.to_string(),
            };
            o.set(spec.name, &v).expect("defaults are valid");
        }
        o
    }
}

/// Other names an option is set by (not announced): (alias, option).
const ALIASES: &[(&str, &str)] = &[("MaxPlies", "MaxMovesToDraw")];

fn find(name: &str) -> Option<&'static OptionSpec> {
    let name = ALIASES.iter().find(|(a, _)| a.eq_ignore_ascii_case(name)).map_or(name, |(_, o)| o);
    SPECS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Stores an option's new value; answers what the change affects.
fn store<T>(slot: &mut T, value: T, effect: Effect) -> Effect {
    *slot = value;
    effect
}

/// Why an option was not set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("unknown option '{}'", rules::excerpt(.0))]
    Unknown(String),
    #[error("option {name}: '{}' is not an integer", rules::excerpt(.value))]
    NotInteger { name: &'static str, value: String },
    #[error("option {name}: {value} is outside {min}..{max}")]
    OutOfRange { name: &'static str, value: i64, min: i64, max: i64 },
    #[error("option {name}: {value} is neither -1 (auto: the network's) nor in {min}..{max}")]
    NeitherAutoNorInRange { name: &'static str, value: i64, min: i64, max: i64 },
    #[error("option {name}: '{}' is not true or false", rules::excerpt(.value))]
    NotBoolean { name: &'static str, value: String },
    #[error("option {name}: '{}' is not one of {}", rules::excerpt(.value), .vars.join(", "))]
    NotAChoice { name: &'static str, value: String, vars: &'static [&'static str] },
    #[error("option UCI_Variant: {0}")]
    Variant(#[from] rules::UnknownVariant),
    #[error("option '{0}' has no handler")]
    NoHandler(&'static str),
}

/// Search threads and leaves per forward pass when `Threads` and `BatchSize` are 0
/// (auto). On the CPU batches of 16 (which won at byoyomi 1 s, docs/strength.md, "At a
/// clock"); with libtorch one thread, since its evaluator runs one forward pass at a time
/// and a second thread gains nothing on two cores; with the portable backend a thread a
/// core up to [`PORTABLE_MAX_THREADS`], each running its own passes (1.7 to 2.1 times libtorch's
/// nodes per second on two cores, docs/performance.md, "Backends"). On a GPU a batch must
/// be large to use the device and several threads keep it busy while each selects its
/// next batch under the tree's lock: per GPU, the setting that `scripts/gpu-bench.sh`
/// measured fastest in one game on an H200 (docs/performance.md, "koma-usi on a GPU").
pub const CPU_THREADS: usize = 1;
pub const PORTABLE_MAX_THREADS: usize = 8;
pub const CPU_BATCH: usize = 16;
pub const GPU_THREADS_PER_DEVICE: usize = 2;
pub const GPU_BATCH: usize = 256;

/// Leaves per forward pass for a `BatchSize` of `batch_size`: itself, or at auto (0)
/// [`CPU_BATCH`] on the CPU and [`GPU_BATCH`] on a GPU.
pub fn leaves_per_batch(batch_size: usize, gpu: bool) -> usize {
    match (batch_size, gpu) {
        (0, false) => CPU_BATCH,
        (0, true) => GPU_BATCH,
        (b, _) => b,
    }
}

impl Options {
    /// Search threads for a network on `gpus` GPUs (0: the CPU, `portable` when on the
    /// portable backend): `Threads`, or at auto [`CPU_THREADS`] with libtorch on the CPU,
    /// one a core (at most [`PORTABLE_MAX_THREADS`]) on the portable backend, else
    /// [`GPU_THREADS_PER_DEVICE`] for each GPU.
    pub fn search_threads(&self, gpus: usize, portable: bool) -> usize {
        let cores = || std::thread::available_parallelism().map_or(1, |n| n.get());
        match (self.threads, gpus) {
            (0, 0) if portable => cores().min(PORTABLE_MAX_THREADS),
            (0, 0) => CPU_THREADS,
            (0, g) => GPU_THREADS_PER_DEVICE * g,
            (t, _) => t,
        }
    }

    /// The time options of a move's budget (`search::time::budget_with`).
    pub fn time_options(&self) -> search::time::TimeOptions {
        search::time::TimeOptions {
            margin: self.margin_ms,
            network_delay: self.network_delay_ms,
            network_delay2: self.network_delay2_ms,
            minimum_thinking: self.minimum_thinking_ms,
            slow_mover: self.slow_mover,
        }
    }

    /// Milliseconds kept back from the hard limit (the larger of `ByoyomiMargin` and
    /// `NetworkDelay2`).
    pub fn hard_margin_ms(&self) -> u64 {
        self.margin_ms.max(self.network_delay2_ms)
    }

    /// Leaves a search thread evaluates in one forward pass ([`leaves_per_batch`] of
    /// `BatchSize`).
    pub fn leaves_per_batch(&self, gpu: bool) -> usize {
        leaves_per_batch(self.batch_size, gpu)
    }

    /// Sets an option by name (case-insensitive). Errors name the problem.
    pub fn set(&mut self, name: &str, value: &str) -> Result<Effect, OptionError> {
        let spec = find(name).ok_or_else(|| OptionError::Unknown(name.to_string()))?;
        let value = value.trim();
        let int = || -> Result<i64, OptionError> {
            let OptionKind::Spin { min, max, .. } = spec.kind else { unreachable!() };
            let v: i64 =
                value.parse().map_err(|_| OptionError::NotInteger { name: spec.name, value: value.to_string() })?;
            if v < min || v > max {
                return Err(OptionError::OutOfRange { name: spec.name, value: v, min, max });
            }
            Ok(v)
        };
        let choice = || -> Result<&'static str, OptionError> {
            let OptionKind::Combo { vars, .. } = spec.kind else { unreachable!() };
            vars.iter().copied().find(|v| v.eq_ignore_ascii_case(value)).ok_or_else(|| OptionError::NotAChoice {
                name: spec.name,
                value: value.to_string(),
                vars,
            })
        };
        // A string left empty (`<empty>` or nothing) takes the option's default.
        let text_or_default = || -> String {
            let (OptionKind::Text(default) | OptionKind::File(default)) = spec.kind else { unreachable!() };
            if value.is_empty() || value == EMPTY {
                default.to_string()
            } else {
                value.to_string()
            }
        };
        let check = || -> Result<bool, OptionError> {
            match value.to_ascii_lowercase().as_str() {
                "true" | "1" | "on" => Ok(true),
                "false" | "0" | "off" => Ok(false),
                _ => Err(OptionError::NotBoolean { name: spec.name, value: value.to_string() }),
            }
        };
        Ok(match spec.name {
            "ModelFile" => store(&mut self.model_file, text_or_default(), Effect::Network),
            "Device" => store(&mut self.device, text_or_default(), Effect::Network),
            "Backend" => {
                let backend = choice()?.parse().expect("the choices are backends");
                store(&mut self.backend, backend, Effect::Network)
            }
            "Threads" => store(&mut self.threads, int()? as usize, Effect::Other),
            "BatchSize" => store(&mut self.batch_size, int()? as usize, Effect::Other),
            "TorchThreads" => store(&mut self.torch_threads, int()? as usize, Effect::Network),
            "USI_Hash" => store(&mut self.hash_mib, int()? as usize, Effect::Tree),
            "USI_Ponder" => store(&mut self.ponder, check()?, Effect::Other),
            "MultiPV" => store(&mut self.multipv, int()? as usize, Effect::Other),
            "ByoyomiMargin" => store(&mut self.margin_ms, int()? as u64, Effect::Other),
            "NetworkDelay" => store(&mut self.network_delay_ms, int()? as u64, Effect::Other),
            "NetworkDelay2" => store(&mut self.network_delay2_ms, int()? as u64, Effect::Other),
            "MinimumThinkingTime" => store(&mut self.minimum_thinking_ms, int()? as u64, Effect::Other),
            "SlowMover" => store(&mut self.slow_mover, int()? as u64, Effect::Other),
            "NodesLimit" => store(&mut self.nodes_limit, int()? as u64, Effect::Other),
            "ResignValue" => store(&mut self.resign_value, int()? as u32, Effect::Other),
            "UCI_Variant" => {
                let v = value.parse::<Variant>()?;
                store(&mut self.variant, v, Effect::Variant)
            }
            "MaxMovesToDraw" => store(&mut self.max_plies, int()? as u32, Effect::Tree),
            "EnteringKingRule" => {
                let rule = choice()?.parse().expect("the choices are entering king rules");
                store(&mut self.entering_king_rule, rule, Effect::Tree)
            }
            "Draw_Value_Black" => store(&mut self.draw_value_black, int()? as u32, Effect::Other),
            "Draw_Value_White" => store(&mut self.draw_value_white, int()? as u32, Effect::Other),
            "USI_OwnBook" => store(&mut self.book.own_book, check()?, Effect::Other),
            "BookFile" => {
                let file = text_or_default();
                store(&mut self.book.file, if file == EMPTY { String::new() } else { file }, Effect::Other)
            }
            "BookMoves" => store(&mut self.book.moves, int()? as u32, Effect::Other),
            "BookEvalDiff" => store(&mut self.book.eval_diff, int()? as i32, Effect::Other),
            "BookEvalBlackLimit" => store(&mut self.book.black_limit, int()? as i32, Effect::Other),
            "BookEvalWhiteLimit" => store(&mut self.book.white_limit, int()? as i32, Effect::Other),
            "BookDepthLimit" => store(&mut self.book.depth_limit, int()? as i32, Effect::Other),
            "ConsiderBookMoveCount" => store(&mut self.book.by_count, check()?, Effect::Other),
            "InfoInterval" => store(&mut self.info_interval_ms, int()? as u64, Effect::Other),
            "SearchStats" => store(&mut self.search_stats, check()?, Effect::Other),
            "CPuct" => store(&mut self.c_puct, int()?, Effect::Tree),
            "CPuctBase" => store(&mut self.c_puct_base, int()?, Effect::Tree),
            "FpuReduction" => store(&mut self.fpu_reduction, int()?, Effect::Tree),
            "RootFpuReduction" => store(&mut self.root_fpu_reduction, int()?, Effect::Tree),
            "PolicySoftmaxTemp" => store(&mut self.policy_softmax_temp, int()?, Effect::Tree),
            "VirtualLoss" => store(&mut self.virtual_loss, int()?, Effect::Tree),
            "MateSearchPlies" => {
                let plies = choice()?.parse().expect("the choices are numbers");
                store(&mut self.mate_search_plies, plies, Effect::Tree)
            }
            "MateHash" => store(&mut self.mate_hash_mib, int()? as usize, Effect::Other),
            "MaterialMix" => store(&mut self.material_mix, int()?, Effect::Tree),
            "MaterialScale" => {
                let v = int()?;
                if v != AUTO && v < MIN_MATERIAL_SCALE {
                    let (min, max) = (MIN_MATERIAL_SCALE, MAX_MATERIAL_SCALE);
                    return Err(OptionError::NeitherAutoNorInRange { name: spec.name, value: v, min, max });
                }
                store(&mut self.material_scale, v, Effect::Tree)
            }
            "MaterialCheckPlies" => store(&mut self.material_check_plies, int()?, Effect::Tree),
            "RootMateNodes" => store(&mut self.root_mate_nodes, int()?, Effect::Tree),
            "LeafMateNodes" => store(&mut self.leaf_mate_nodes, int()?, Effect::Tree),
            "RootTactics" => store(&mut self.root_tactics, int()?, Effect::Tree),
            "RootTacticsMargin" => store(&mut self.root_tactics_margin, int()?, Effect::Tree),
            other => return Err(OptionError::NoHandler(other)),
        })
    }

    /// The search constants (hundredths in the options become fractions) with no network
    /// loaded: `MaterialMix` and `MaterialScale` at auto are 0 and 6.
    pub fn search_config(&self) -> SearchConfig {
        self.search_config_for(None)
    }

    /// The leaf material mix (a fraction) and scale the search uses with a network that
    /// records `network` (the setting it was trained with): each option at [`AUTO`] takes
    /// the network's value (without a record, 0 and `rules::MATERIAL_SCALE`), any other
    /// value overrides it.
    pub fn leaf_material(&self, network: Option<LeafMaterial>) -> (f32, f32) {
        let mut own = SearchConfig::default();
        if self.material_mix != AUTO {
            own.leaf_material_mix = self.material_mix as f32 / 100.0;
        }
        if self.material_scale != AUTO {
            own.leaf_material_scale = self.material_scale as f32;
        }
        let s = own.with_leaf_material_of(network, self.material_mix == AUTO, self.material_scale == AUTO);
        (s.leaf_material_mix, s.leaf_material_scale)
    }

    /// What the search takes from the network's record `network` when it has one and an
    /// option is at [`AUTO`], in words for an `info string`; `None` otherwise.
    pub fn leaf_material_note(&self, network: Option<LeafMaterial>) -> Option<String> {
        let record = network?;
        if self.material_mix != AUTO && self.material_scale != AUTO {
            return None;
        }
        let (mix, scale) = self.leaf_material(network);
        let from =
            |option: i64, name: &str| if option == AUTO { "the network's".to_string() } else { name.to_string() };
        Some(format!(
            "material mix {}% ({}) at scale {scale} ({}); the network was trained with {}% at scale {}",
            percent(mix),
            from(self.material_mix, "MaterialMix"),
            from(self.material_scale, "MaterialScale"),
            percent(record.mix),
            record.scale
        ))
    }

    /// The search constants with a network that records `network` (its leaf material
    /// setting, [`Options::leaf_material`]).
    pub fn search_config_for(&self, network: Option<LeafMaterial>) -> SearchConfig {
        let (leaf_material_mix, leaf_material_scale) = self.leaf_material(network);
        SearchConfig {
            c_puct: self.c_puct as f32 / 100.0,
            c_puct_base: self.c_puct_base as f32,
            fpu_reduction: self.fpu_reduction as f32 / 100.0,
            root_fpu_reduction: self.root_fpu_reduction as f32 / 100.0,
            policy_softmax_temperature: self.policy_softmax_temp as f32 / 100.0,
            virtual_loss: self.virtual_loss as f32 / 100.0,
            mate_search_plies: self.mate_search_plies as u32,
            max_tree_mib: self.hash_mib,
            leaf_material_mix,
            leaf_material_scale,
            leaf_material_check_plies: self.material_check_plies as u32,
            root_mate_nodes: self.root_mate_nodes as u64,
            leaf_mate_nodes: self.leaf_mate_nodes as u64,
            root_tactics_plies: self.root_tactics as u32,
            root_tactics_margin: self.root_tactics_margin as f32 / 100.0,
            ..SearchConfig::default()
        }
    }

    /// What a draw is worth in the search tree when the engine plays `engine` (the
    /// root's side to move), by the colour to move at the draw ([`rules::Color::index`]),
    /// as win - loss: `Draw_Value_Black` (sente) or `Draw_Value_White` (gote), `p`
    /// thousandths of a win read as `2p/1000 - 1` for the engine and its negation for
    /// the opponent (dlshogi's reading: 500 is a plain draw, 0 as bad as a loss).
    pub fn draw_values(&self, engine: rules::Color) -> [f32; 2] {
        let permille = if engine == rules::Color::Sente { self.draw_value_black } else { self.draw_value_white };
        let own = permille as f32 / 500.0 - 1.0;
        let mut values = [-own; 2];
        values[engine.index()] = own;
        values
    }

    pub fn end_rules(&self) -> rules::EndRules {
        rules::EndRules {
            impasse: self.entering_king_rule,
            max_plies: if self.max_plies > 0 { Some(self.max_plies) } else { None },
        }
    }

    /// The USI `option ...` lines.
    pub fn usi_lines() -> Vec<String> {
        SPECS
            .iter()
            .map(|s| match s.kind {
                OptionKind::Check(b) => format!("option name {} type check default {b}", s.name),
                OptionKind::Spin { default, min, max } => {
                    format!("option name {} type spin default {default} min {min} max {max}", s.name)
                }
                OptionKind::Text(t) => format!("option name {} type string default {}", s.name, or_empty(t)),
                OptionKind::File(t) => format!("option name {} type filename default {}", s.name, or_empty(t)),
                OptionKind::Combo { default, vars } => {
                    let vars: String = vars.iter().map(|v| format!(" var {v}")).collect();
                    format!("option name {} type combo default {default}{vars}", s.name)
                }
            })
            .collect()
    }

    /// The XBoard `feature option="..."` values (variant and ponder have their own
    /// commands there).
    pub fn xboard_features() -> Vec<String> {
        SPECS
            .iter()
            .filter(|s| !matches!(s.name, "UCI_Variant" | "USI_Ponder" | "USI_Hash" | "Threads" | "MateHash"))
            .map(|s| match s.kind {
                OptionKind::Check(b) => format!("option=\"{} -check {}\"", s.name, b as u8),
                OptionKind::Spin { default, min, max } => format!("option=\"{} -spin {default} {min} {max}\"", s.name),
                OptionKind::Text(t) => format!("option=\"{} -string {t}\"", s.name),
                OptionKind::File(t) => format!("option=\"{} -file {t}\"", s.name),
                OptionKind::Combo { default, vars } => {
                    let vars: Vec<String> =
                        vars.iter().map(|v| if *v == default { format!("*{v}") } else { v.to_string() }).collect();
                    format!("option=\"{} -combo {}\"", s.name, vars.join(" /// "))
                }
            })
            .collect()
    }
}

/// A fraction as a percent, to a tenth at most (`0.5` is `50`).
fn percent(fraction: f32) -> f32 {
    (fraction * 1000.0).round() / 10.0
}

/// A USI default: `<empty>` for the empty string (a `default` with no value is malformed).
fn or_empty(text: &str) -> &str {
    if text.is_empty() {
        EMPTY
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors() {
        let mut o = Options::default();
        assert_eq!(o.model_file, "auto");
        assert_eq!((o.threads, o.batch_size), (0, 0), "auto");
        assert_eq!((o.search_threads(0, false), o.leaves_per_batch(false)), (CPU_THREADS, CPU_BATCH));
        let cores = std::thread::available_parallelism().unwrap().get();
        assert_eq!(o.search_threads(0, true), cores.min(PORTABLE_MAX_THREADS));
        assert_eq!((o.search_threads(2, false), o.leaves_per_batch(true)), (2 * GPU_THREADS_PER_DEVICE, GPU_BATCH));
        o.set("Threads", "3").unwrap();
        o.set("BatchSize", "48").unwrap();
        assert_eq!((o.search_threads(0, true), o.search_threads(2, false), o.leaves_per_batch(true)), (3, 3, 48));
        assert_eq!(o.search_config().c_puct, search::PLAY_C_PUCT);
        assert!(o.set("Threads", "-1").is_err());
        assert!(o.set("Threads", "x").is_err());
        assert!(o.set("Nope", "1").is_err());
        assert_eq!(o.set("uci_variant", "sho"), Ok(Effect::Variant));
        assert_eq!(o.variant, Variant::Sho);
        assert!(o.set("UCI_Variant", "chess").is_err());
        assert_eq!(o.set("USI_Ponder", "true"), Ok(Effect::Other));
        assert!(o.ponder);
    }

    /// MaterialMix and MaterialScale reach the search as the fraction and scale of
    /// `[search]`, every value they announce is one the search takes, and the defaults
    /// (auto) take the network's own setting: without a record, the network alone.
    #[test]
    fn material_mix_reaches_the_search() {
        let mut o = Options::default();
        assert_eq!((o.material_mix, o.material_scale), (AUTO, AUTO));
        assert!(Options::usi_lines().contains(&"option name MaterialMix type spin default -1 min -1 max 100".into()));
        assert!(Options::usi_lines().contains(&"option name MaterialScale type spin default -1 min -1 max 1000".into()));
        let search = o.search_config();
        assert_eq!((search.leaf_material_mix, search.leaf_material_scale), (0.0, 6.0));
        let record = LeafMaterial { mix: 0.5, scale: 36.0 };
        let with_record = |o: &Options| {
            let s = o.search_config_for(Some(record));
            (s.leaf_material_mix, s.leaf_material_scale)
        };
        assert_eq!(with_record(&o), (0.5, 36.0), "auto: the network's");
        assert!(o.leaf_material_note(Some(record)).unwrap().contains("50% (the network's) at scale 36"));
        assert_eq!(o.leaf_material_note(None), None);
        assert_eq!(o.set("MaterialMix", "25"), Ok(Effect::Tree));
        assert_eq!(with_record(&o), (0.25, 36.0), "the option overrides the mix only");
        assert_eq!(o.search_config().leaf_material_mix, 0.25);
        assert_eq!(o.set("MaterialScale", "10"), Ok(Effect::Tree));
        assert_eq!(with_record(&o), (0.25, 10.0));
        assert_eq!(o.leaf_material_note(Some(record)), None, "nothing taken from the network");
        o.set("MaterialMix", "0").unwrap();
        assert_eq!(with_record(&o), (0.0, 10.0), "0 turns a recorded mix off");
        o.set("MaterialMix", "-1").unwrap();
        assert_eq!(with_record(&o), (0.5, 10.0));
        for (mix, scale) in [("0", "1"), ("100", "1000"), ("-1", "-1")] {
            o.set("MaterialMix", mix).unwrap();
            o.set("MaterialScale", scale).unwrap();
            assert!(o.search_config().validate().is_ok(), "{mix} {scale}");
            assert!(o.search_config_for(Some(record)).validate().is_ok(), "{mix} {scale}");
        }
        assert!(o.set("MaterialMix", "101").is_err());
        assert!(o.set("MaterialMix", "-2").is_err());
        let e = o.set("MaterialScale", "0").unwrap_err();
        assert!(matches!(e, OptionError::NeitherAutoNorInRange { value: 0, .. }), "{e}");
        assert_eq!(o.material_scale, AUTO, "a refused value changes nothing");
    }

    /// Shogidokoro sends `<empty>` for a string left empty: the default, for every
    /// string option (Device took it for a device name).
    #[test]
    fn empty_strings_take_the_default() {
        let mut o = Options::default();
        for name in ["ModelFile", "Device"] {
            o.set(name, "cpu").unwrap();
            o.set(name, EMPTY).unwrap();
            o.set(name, "").unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        o.set("Device", "cpu").unwrap();
        o.set("Device", "<empty>").unwrap();
        assert_eq!((o.model_file.as_str(), o.device.as_str()), ("auto", "auto"));
    }

    /// Every value an option announces is one it takes: MateSearchPlies was a spin of
    /// 0..3 whose 2 the tree does not know (`SearchConfig::validate` refuses it).
    /// The root checks' and the check plies' options default to the search's defaults and
    /// reach the search.
    #[test]
    fn root_check_options_reach_the_search() {
        let mut o = Options::default();
        let (search, defaults) = (o.search_config(), SearchConfig::default());
        assert_eq!(search.leaf_material_check_plies, defaults.leaf_material_check_plies);
        assert_eq!(search.root_mate_nodes, defaults.root_mate_nodes);
        assert_eq!(search.leaf_mate_nodes, defaults.leaf_mate_nodes);
        assert_eq!(search.root_tactics_plies, defaults.root_tactics_plies);
        assert_eq!(search.root_tactics_margin, defaults.root_tactics_margin);
        for (name, value) in
            [("MaterialCheckPlies", "1"), ("RootMateNodes", "5000"), ("LeafMateNodes", "300"), ("RootTactics", "2")]
        {
            assert_eq!(o.set(name, value), Ok(Effect::Tree));
        }
        o.set("RootTacticsMargin", "150").unwrap();
        let search = o.search_config();
        assert_eq!(search.leaf_material_check_plies, 1);
        assert_eq!(search.root_mate_nodes, 5000);
        assert_eq!(search.leaf_mate_nodes, 300);
        assert_eq!(search.root_tactics_plies, 2);
        assert_eq!(search.root_tactics_margin, 1.5);
        assert!(search.validate().is_ok());
        assert!(o.set("RootTactics", "5").is_err());
    }

    #[test]
    fn mate_search_plies_offers_only_what_the_tree_takes() {
        let mut o = Options::default();
        assert!(
            Options::usi_lines().contains(&"option name MateSearchPlies type combo default 3 var 0 var 1 var 3".into())
        );
        for (value, plies) in [("0", 0), ("1", 1), ("3", 3)] {
            o.set("MateSearchPlies", value).unwrap();
            assert_eq!(o.mate_search_plies, plies);
            assert!(SearchConfig { mate_search_plies: plies as u32, ..SearchConfig::default() }.validate().is_ok());
        }
        for bad in ["2", "4", "-1", "x", ""] {
            let e = o.set("MateSearchPlies", bad).unwrap_err();
            assert!(matches!(e, OptionError::NotAChoice { .. }), "{bad}: {e}");
        }
        assert!(o.set("MateSearchPlies", "2").unwrap_err().to_string().contains("0, 1, 3"));
    }

    /// The rules and draw options: announced with YaneuraOu's and dlshogi's names,
    /// defaults and ranges; each reaches the end rules or the draw values; bad values are
    /// refused and change nothing; `MaxPlies` is an alias of `MaxMovesToDraw`.
    #[test]
    fn rules_and_draw_options_reach_the_end_rules_and_draw_values() {
        let lines = Options::usi_lines();
        for line in [
            "option name MaxMovesToDraw type spin default 0 min 0 max 1000000",
            "option name EnteringKingRule type combo default CSARule27 var NoEnteringKing var CSARule24 var CSARule27 \
             var TryRule",
            "option name Draw_Value_Black type spin default 500 min 0 max 1000",
            "option name Draw_Value_White type spin default 500 min 0 max 1000",
        ] {
            assert!(lines.iter().any(|l| l == line), "{line}");
        }
        assert!(!lines.iter().any(|l| l.contains("MaxPlies")), "an alias is not announced");
        let mut o = Options::default();
        assert_eq!(o.end_rules(), rules::EndRules::default());
        assert_eq!(o.end_rules().impasse, rules::ImpasseRule::Declaration27);
        assert_eq!(o.draw_values(rules::Color::Sente), [0.0, 0.0]);
        for (name, rule) in [
            ("NoEnteringKing", rules::ImpasseRule::NoDeclaration),
            ("csarule24", rules::ImpasseRule::Declaration24),
            ("TryRule", rules::ImpasseRule::Try),
            ("CSARule27", rules::ImpasseRule::Declaration27),
        ] {
            assert_eq!(o.set("EnteringKingRule", name), Ok(Effect::Tree));
            assert_eq!(o.end_rules().impasse, rule);
        }
        for bad in ["CSARule25", "Points24", "", "27"] {
            let e = o.set("EnteringKingRule", bad).unwrap_err();
            assert!(matches!(e, OptionError::NotAChoice { .. }), "{bad}: {e}");
        }
        assert_eq!(o.end_rules().impasse, rules::ImpasseRule::Declaration27);
        assert_eq!(o.set("MaxMovesToDraw", "256"), Ok(Effect::Tree));
        assert_eq!(o.end_rules().max_plies, Some(256));
        assert_eq!(o.set("maxplies", "300"), Ok(Effect::Tree));
        assert_eq!(o.end_rules().max_plies, Some(300));
        o.set("MaxMovesToDraw", "0").unwrap();
        assert_eq!(o.end_rules().max_plies, None);
        assert!(o.set("MaxMovesToDraw", "-1").is_err());
        o.set("Draw_Value_Black", "900").unwrap();
        o.set("Draw_Value_White", "100").unwrap();
        let close = |a: [f32; 2], b: [f32; 2]| (a[0] - b[0]).abs() < 1e-6 && (a[1] - b[1]).abs() < 1e-6;
        // Sente's value at sente's draws and its negation at gote's, and the other way.
        assert!(close(o.draw_values(rules::Color::Sente), [0.8, -0.8]), "{:?}", o.draw_values(rules::Color::Sente));
        assert!(close(o.draw_values(rules::Color::Gote), [0.8, -0.8]), "gote's 100: -0.8 for gote");
        o.set("Draw_Value_White", "1000").unwrap();
        assert!(close(o.draw_values(rules::Color::Gote), [-1.0, 1.0]));
        let e = o.set("Draw_Value_Black", "1001").unwrap_err();
        assert!(matches!(e, OptionError::OutOfRange { value: 1001, .. }), "{e}");
        assert!(o.set("Draw_Value_White", "half").is_err());
        assert_eq!((o.draw_value_black, o.draw_value_white), (900, 1000), "a refused value changes nothing");
    }

    /// ModelFile is a file name: GUIs show a file chooser (USI `filename`, XBoard `-file`).
    #[test]
    fn model_file_is_announced_as_a_file_name() {
        assert_eq!(Options::usi_lines()[0], "option name ModelFile type filename default auto");
        assert_eq!(Options::xboard_features()[0], "option=\"ModelFile -file auto\"");
    }

    /// Each announced default is a value the option takes, inside its range; the search
    /// constants of every spin value are ones the tree accepts at both ends.
    #[test]
    fn announced_defaults_and_ranges_are_valid() {
        for spec in SPECS {
            let mut o = Options::default();
            match spec.kind {
                OptionKind::Spin { default, min, max } => {
                    assert!(min <= default && default <= max, "{}", spec.name);
                    for v in [min, max] {
                        o.set(spec.name, &v.to_string()).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
                        o.search_config().validate().unwrap_or_else(|e| panic!("{} = {v}: {e}", spec.name));
                    }
                    assert!(o.set(spec.name, &(min - 1).to_string()).is_err(), "{}", spec.name);
                    assert!(o.set(spec.name, &(max + 1).to_string()).is_err(), "{}", spec.name);
                }
                OptionKind::Combo { default, vars } => {
                    assert!(vars.contains(&default), "{}", spec.name);
                    for v in vars {
                        o.set(spec.name, v).unwrap_or_else(|e| panic!("{} = {v}: {e}", spec.name));
                        o.search_config().validate().unwrap_or_else(|e| panic!("{} = {v}: {e}", spec.name));
                    }
                }
                OptionKind::Check(_) | OptionKind::Text(_) | OptionKind::File(_) => {}
            }
        }
    }
}
