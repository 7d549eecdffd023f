//! What both protocols share: the options, the network, the search tree kept between
//! moves, and the search thread (which also runs `go mate`'s tsume solver).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::book::EngineBook;
use nn::encoding::Encoder;
use nn::{Backend, BackendError, CheckpointError, EvalError, Expected};
use rules::Move;
use rules::{Position, Variant};
use search::driver::{self, Settings};
use search::mate::{MateError, MateLimits, MateReport, MateSolver};
use search::{
    Control, DirectEvaluator, Info, LeafEvaluator, Limits, PlayerTree, SearchError, SearchOutcome, StopReason,
};

use crate::options::{Effect, OptionError, Options, UNIFORM};

/// Where `ModelFile=auto` looks, in order (the first that exists wins):
/// 1. the path in the environment variable `KOMA_MODEL`;
/// 2. next to the `koma-usi` binary: `model-<variant>.safetensors` (a file written by
///    `koma export`, or the weights of a checkpoint pair), `model-<variant>.json` (a
///    checkpoint pair), then `model.safetensors` and `model.json` there;
/// 3. of the runs under `runs/` in the working directory, the newest network (by
///    modification time) that plays `variant` (a dai run trained last does not hide the
///    shogi one): each run's published network, the one its `models/latest.json` names,
///    or for a run that publishes none (`koma learn`) its newest checkpoint
///    ([`dataio::run_layout`]);
/// 4. the networks that ship with koma: `models/<variant>.safetensors` of the checkout
///    the binary was built in (found from the binary, `target/release/..`, and from the
///    path it was compiled at), so a fresh clone plays without any training.
pub fn auto_model_candidates(variant: Variant) -> (Vec<PathBuf>, String) {
    let mut list = Vec::new();
    let mut looked = Vec::new();
    if let Ok(p) = std::env::var("KOMA_MODEL") {
        if !p.is_empty() {
            list.push(PathBuf::from(&p));
            looked.push(format!("$KOMA_MODEL={p}"));
        }
    }
    if let Some(dir) = exe_dir() {
        let v = variant.name();
        for name in [
            format!("model-{v}.safetensors"),
            format!("model-{v}.json"),
            "model.safetensors".into(),
            "model.json".into(),
        ] {
            let p = dir.join(&name);
            looked.push(p.display().to_string());
            list.push(p);
        }
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    looked.push(format!("the networks of the runs in {}/runs (models/latest.json)", cwd.display()));
    if let Some(p) = newest_run_network(&cwd.join("runs"), variant) {
        list.push(p);
    }
    for dir in shipped_model_dirs() {
        let p = dir.join(format!("{}.safetensors", variant.name()));
        looked.push(p.display().to_string());
        list.push(p);
    }
    (list, looked.join(", "))
}

/// The `models/` folders of the checkout: above the binary (`<checkout>/target/<profile>/`)
/// and where the crate was compiled (the same checkout, unless the binary was moved).
fn shipped_model_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(checkout) = exe_dir().as_deref().and_then(Path::parent).and_then(Path::parent) {
        dirs.push(checkout.join("models"));
    }
    let compiled_at = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("models");
    if let Ok(compiled_at) = compiled_at.canonicalize() {
        if !dirs.iter().any(|d| d.canonicalize().is_ok_and(|d| d == compiled_at)) {
            dirs.push(compiled_at);
        }
    }
    dirs
}

fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf))
}

/// The newest network of a run in `runs` that plays `variant`: each run's published model
/// (else its newest checkpoint), newest first by the modification time of its metadata.
fn newest_run_network(runs: &Path, variant: Variant) -> Option<PathBuf> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for run in std::fs::read_dir(runs).ok()?.flatten() {
        let run = run.path();
        // A damaged pointer hides only its own run.
        let published = dataio::run_layout::published_model(&run).ok().flatten();
        let Some(meta) = published.or_else(|| dataio::run_layout::newest_checkpoint(&run)) else { continue };
        if let Ok(t) = meta.metadata().and_then(|m| m.modified()) {
            found.push((t, meta));
        }
    }
    // Newest first; only the metadata of the candidates up to the first match is read.
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    let plays = |p: &Path| nn::read_checkpoint_meta(p).is_ok_and(|m| m.variant == variant.name());
    found.into_iter().map(|(_, p)| p).find(|p| plays(p))
}

/// Why `ModelFile` names no network.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// `auto` found none; `looked` says where it looked.
    #[error(
        "no network found for ModelFile=auto (looked at {looked}); set the ModelFile option to a \
         model file (koma export) or a checkpoint (<stem>.json with its .safetensors), or to {UNIFORM} \
         for the uniform evaluator"
    )]
    NoneFound { looked: String },
    #[error(
        "ModelFile '{}' {}: {why}; set ModelFile to a model file (koma export), a checkpoint \
         (<stem>.json with its .safetensors) or to {UNIFORM}",
        rules::Excerpt::with_max(spec, crate::ECHO_CHARS),
        if matches!(**why, CheckpointError::NotFound { .. }) { "not found" } else { "unusable" }
    )]
    Unusable { spec: String, why: Box<CheckpointError> },
}

/// Why the engine refused a command or has no network.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Option(#[from] OptionError),
    #[error("option {} not changed while searching (send stop first)", rules::excerpt(.0))]
    SetWhileSearching(String),
    #[error("a search is already running (send stop first)")]
    AlreadySearching,
    #[error("the position is {position} but UCI_Variant is {option}")]
    WrongVariant { position: Variant, option: Variant },
    #[error(transparent)]
    ModelFile(#[from] ModelFileError),
    #[error("loading the network panicked: {0}")]
    LoadPanicked(String),
    #[error(
        "cannot load the network: {why}{}",
        if matches!(**why, BackendError::Load(CheckpointError::WrongVariant { .. })) {
            " (set UCI_Variant or ModelFile)"
        } else {
            ""
        }
    )]
    Load { why: Box<BackendError> },
    #[error("the network fails to evaluate: {0}")]
    Evaluate(#[from] EvalError),
    #[error("cannot start the search thread: {0}")]
    SearchThread(std::io::Error),
}

/// The network that `ModelFile` names (a checkpoint by any of its names, or a model file).
pub fn resolve_model(spec: &str, variant: Variant) -> Result<PathBuf, ModelFileError> {
    let exists = |p: &Path| nn::locate_model(p).is_ok();
    if spec.eq_ignore_ascii_case("auto") {
        let (list, looked) = auto_model_candidates(variant);
        return list.into_iter().find(|p| exists(p)).ok_or(ModelFileError::NoneFound { looked });
    }
    let p = PathBuf::from(spec);
    let why = match nn::locate_model(&p) {
        Ok(_) => return Ok(p),
        Err(e) => e,
    };
    if p.is_relative() {
        if let Some(next_to_binary) = exe_dir().map(|d| d.join(&p)).filter(|q| exists(q)) {
            return Ok(next_to_binary);
        }
    }
    Err(ModelFileError::Unusable { spec: spec.to_string(), why: Box::new(why) })
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct NetKey {
    model: PathBuf,
    device: String,
    backend: Backend,
    variant: Variant,
    torch_threads: usize,
    /// `BatchSize` (0: auto), which sets the warmed-up batch size.
    batch_size: usize,
}

struct Network {
    /// On the first device of `Device` (its metadata and encoder are the network's).
    network: nn::Network,
    /// One evaluator per device of `Device` (`cuda:0,cuda:1`: the search threads take
    /// them in turn), the first `network`'s.
    evaluators: Vec<Arc<dyn nn::Evaluator>>,
    /// The network's encoder, shared with the search threads.
    encoder: Arc<Encoder>,
    key: NetKey,
    description: String,
    /// How many of the devices are GPUs (0: the CPU).
    gpus: usize,
    /// Whether every evaluator is the portable backend's (which runs a pass a thread).
    portable: bool,
}

struct Running {
    handle: JoinHandle<()>,
    control: Arc<Control>,
    /// Set when the search has its result (it is being reported).
    finished: Arc<AtomicBool>,
    /// The tree it searches (a `go mate` has none of its own: the engine's).
    tree: Arc<Mutex<PlayerTree>>,
}

/// Before searching: does the game end here without a move?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Immediate {
    /// The side to move wins by declaring (by `EnteringKingRule`, the 27-point rule unless
    /// set otherwise): USI `bestmove win`.
    Declare,
    /// The game is over (or the side to move has no legal move).
    GameOver(Option<rules::Outcome>),
}

pub fn immediate(pos: &Position, end_rules: &rules::EndRules) -> Option<Immediate> {
    if pos.can_declare_win(end_rules.impasse) {
        return Some(Immediate::Declare);
    }
    if let Some(o) = pos.outcome(end_rules) {
        return Some(Immediate::GameOver(Some(o)));
    }
    if !pos.has_legal_move() {
        return Some(Immediate::GameOver(None));
    }
    None
}

/// How a `go mate` ended.
#[derive(Debug)]
pub enum MateOutcome {
    Report(MateReport),
    /// The solver does not take this position (another variant).
    Refused(MateError),
    /// The solver panicked (a bug): the message.
    Panicked(String),
}

/// Stack of the solver's thread: the search recurses once per ply (up to
/// [`search::mate::DEFAULT_MAX_PLIES`]).
const MATE_STACK_BYTES: usize = 64 << 20;

/// Options, network, tree and the running search.
pub struct Core {
    pub opts: Options,
    net: Option<Network>,
    tree: Arc<Mutex<PlayerTree>>,
    tree_dirty: bool,
    running: Option<Running>,
    /// Searches that answered (on their watchdog) while their thread was still busy, with
    /// their trees.
    previous: Vec<(JoinHandle<()>, Arc<Mutex<PlayerTree>>)>,
    /// The tsume solver with its table size in MiB (made at the first `go mate`).
    mate: Option<(usize, Arc<Mutex<MateSolver>>)>,
    /// The opening book of `BookFile`, read at `isready` (or the first `go` after the
    /// option changed); `Err` keeps the last failure so that it is reported once.
    book: Option<(String, Result<Arc<EngineBook>, String>)>,
    /// Draws among the book's moves.
    book_rng: search::Rng,
}

impl Default for Core {
    fn default() -> Self {
        Core::new()
    }
}

impl Core {
    pub fn new() -> Core {
        let opts = Options::default();
        let tree = PlayerTree::new(opts.search_config(), opts.end_rules(), &Position::startpos(opts.variant));
        let seed =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Core {
            opts,
            net: None,
            tree: Arc::new(Mutex::new(tree)),
            tree_dirty: false,
            running: None,
            previous: Vec::new(),
            mate: None,
            book: None,
            book_rng: search::Rng::new(seed),
        }
    }

    pub fn variant(&self) -> Variant {
        self.opts.variant
    }

    /// Reads `BookFile` when it names another book than the one read: the line to report
    /// (what the book holds, or why it could not be read), `None` when nothing changed
    /// or no book is set. Standard shogi only (books are USI's).
    pub fn load_book(&mut self) -> Option<Result<String, String>> {
        let file = self.opts.book.file.clone();
        if file.is_empty() || self.opts.variant != Variant::Shogi {
            self.book = None;
            return None;
        }
        if self.book.as_ref().is_some_and(|(f, _)| *f == file) {
            return None;
        }
        let (loaded, line) = match EngineBook::load(Path::new(&file)) {
            Ok((book, note)) => (Ok(Arc::new(book)), Ok(note)),
            Err(e) => (Err(e.to_string()), Err(format!("book: {e}; playing without a book"))),
        };
        self.book = Some((file, loaded));
        Some(line)
    }

    /// The book's answer in `pos` (its `info` lines and `bestmove`), if the book has one.
    pub fn book_move(&mut self, pos: &Position) -> Option<Vec<String>> {
        let (_, Ok(book)) = self.book.as_ref()? else { return None };
        let pick = book.pick(pos, &self.opts.book, self.book_rng.f64())?;
        Some(pick.lines(&book.path))
    }

    /// Sets an option; refused while a search runs.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<Effect, EngineError> {
        if self.is_searching() {
            return Err(EngineError::SetWhileSearching(name.to_string()));
        }
        let effect = self.opts.set(name, value)?;
        if matches!(effect, Effect::Tree | Effect::Variant) {
            self.tree_dirty = true;
        }
        Ok(effect)
    }

    /// Whether a network (or the uniform evaluator) is loaded and matches the options.
    pub fn network_ready(&self) -> bool {
        match (&self.net, self.net_key()) {
            (Some(n), Ok(k)) => n.key == k,
            _ => false,
        }
    }

    fn net_key(&self) -> Result<NetKey, ModelFileError> {
        let model = if self.opts.model_file.eq_ignore_ascii_case(UNIFORM)
            || self.opts.model_file.eq_ignore_ascii_case("uniform")
        {
            PathBuf::from(UNIFORM)
        } else {
            resolve_model(&self.opts.model_file, self.opts.variant)?
        };
        Ok(NetKey {
            model,
            device: self.opts.device.clone(),
            backend: self.opts.backend,
            variant: self.opts.variant,
            torch_threads: self.opts.torch_threads,
            batch_size: self.opts.batch_size,
        })
    }

    /// Loads the network the options name unless it is loaded already (and warms it up
    /// with one batch). Returns a description, or an error message for the user.
    pub fn load_network(&mut self) -> Result<String, EngineError> {
        let key = self.net_key()?;
        if let Some(n) = &self.net {
            if n.key == key {
                return Ok(n.description.clone());
            }
        }
        self.net = None;
        let loaded = catch_unwind(AssertUnwindSafe(|| load(&key)))
            .unwrap_or_else(|p| Err(EngineError::LoadPanicked(panic_text(&p))))?;
        let description = loaded.description.clone();
        self.net = Some(loaded);
        // Another network: the old one's values go, and its leaf material setting may
        // differ (`MaterialMix` auto).
        self.tree_dirty = true;
        Ok(description)
    }

    /// The search threads and leaves per forward pass a search runs with the loaded
    /// network (`Threads` and `BatchSize`, or their auto values for its devices).
    pub fn search_shape(&self) -> Option<(usize, usize)> {
        let net = self.net.as_ref()?;
        Some((self.opts.search_threads(net.gpus, net.portable), self.opts.leaves_per_batch(net.gpus > 0)))
    }

    /// The leaf material setting the loaded network records (the one it was trained with).
    pub fn network_leaf_material(&self) -> Option<nn::LeafMaterial> {
        self.net.as_ref()?.network.meta.as_ref()?.leaf_material
    }

    /// The search constants of the options with the loaded network: `MaterialMix` and
    /// `MaterialScale` at auto take its recorded setting ([`Options::search_config_for`]).
    pub fn search_config(&self) -> search::SearchConfig {
        self.opts.search_config_for(self.network_leaf_material())
    }

    /// An `info string` text saying which leaf material setting the search takes from the
    /// loaded network, when it takes any.
    pub fn leaf_material_note(&self) -> Option<String> {
        self.opts.leaf_material_note(self.network_leaf_material())
    }

    /// A new game: the tree is dropped.
    pub fn new_game(&mut self) {
        self.stop();
        self.tree_dirty = true;
    }

    /// Whether a search is running. A search that has answered is not, even while its
    /// thread still finishes (a forward pass in flight after the watchdog answered): that
    /// thread is kept in `previous`, and the next search takes a fresh tree if it still
    /// holds this one.
    pub fn is_searching(&mut self) -> bool {
        if let Some(r) = &self.running {
            if r.handle.is_finished() || r.finished.load(Ordering::SeqCst) {
                let r = self.running.take().expect("checked");
                if r.handle.is_finished() {
                    let _ = r.handle.join();
                } else {
                    self.previous.push((r.handle, r.tree));
                }
                return false;
            }
            return true;
        }
        false
    }

    /// Stops the running search, if any, and waits for it (its result is reported).
    pub fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            r.control.stop();
            let _ = r.handle.join();
        }
    }

    pub fn ponderhit(&self) -> bool {
        match &self.running {
            Some(r) => {
                r.control.ponderhit();
                true
            }
            None => false,
        }
    }

    /// Starts searching `pos` in a new thread; `on_done` receives the result (also after
    /// an internal error: then the best move is the first legal one).
    ///
    /// Under a clock a watchdog thread holds the hard limit: if the search has not
    /// answered by `origin + hard + slack` (a forward pass or a lock held longer than the
    /// budget on a loaded machine), it stops the search and answers with the best move
    /// known so far ([`WATCHDOG_SLACK_MS`]).
    pub fn start(
        &mut self,
        pos: Position,
        mut limits: Limits,
        on_info: Box<dyn Fn(&Info) + Send + Sync>,
        on_done: Box<dyn FnOnce(SearchOutcome) + Send>,
    ) -> Result<(), EngineError> {
        if self.is_searching() {
            return Err(EngineError::AlreadySearching);
        }
        if pos.variant() != self.opts.variant {
            return Err(EngineError::WrongVariant { position: pos.variant(), option: self.opts.variant });
        }
        // The network loads at isready (XBoard: new, variant); here only when there is
        // none for this variant, so that a new checkpoint never loads on the clock.
        if self.net.as_ref().map_or(true, |n| n.key.variant != self.opts.variant) {
            self.load_network()?;
        }
        let net = self.net.as_ref().expect("loaded");
        limits.origin.get_or_insert_with(Instant::now);
        // The last search may still be finishing a forward pass on its tree (its answer
        // went out first): wait for it a little (without a clock, as long as it takes),
        // then take a fresh tree rather than spend this move's time on it.
        let wait = limits.budget.map(|b| Duration::from_millis((b.hard / 10).min(PREVIOUS_WAIT_MS)));
        let until = wait.map(|w| Instant::now() + w);
        while self.previous.iter().any(|(h, _)| !h.is_finished()) && until.map_or(true, |u| Instant::now() < u) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.previous.retain(|(h, _)| !h.is_finished());
        let busy = self.previous.iter().any(|(_, t)| Arc::ptr_eq(t, &self.tree));
        if self.tree_dirty || busy || self.tree.is_poisoned() {
            let tree = PlayerTree::new(self.search_config(), self.opts.end_rules(), &pos);
            self.tree = Arc::new(Mutex::new(tree));
            self.tree_dirty = false;
        }
        if self.opts.nodes_limit > 0 {
            limits.nodes = Some(limits.nodes.map_or(self.opts.nodes_limit, |n| n.min(self.opts.nodes_limit)));
        }
        let settings = Settings {
            batch_size: self.opts.leaves_per_batch(net.gpus > 0),
            multipv: self.opts.multipv,
            info_interval_ms: self.opts.info_interval_ms,
            pad_batches: net.gpus > 0,
        };
        let control = Arc::new(Control::new());
        let tree = self.tree.clone();
        let delay = eval_delay();
        let evaluators: Vec<SearchEvaluator> = (0..self.opts.search_threads(net.gpus, net.portable))
            .map(|i| SearchEvaluator {
                inner: DirectEvaluator::new(net.evaluators[i % net.evaluators.len()].clone()),
                delay,
            })
            .collect();
        let encoder = net.encoder.clone();
        let ctl = control.clone();
        // The root's side to move is the engine's (USI sends `go ponder` after the
        // expected reply): its Draw_Value_Black or Draw_Value_White.
        let draw_values = self.opts.draw_values(pos.side_to_move());
        let finished = Arc::new(AtomicBool::new(false));
        let answer = Arc::new(Answer { on_done: Mutex::new(Some(on_done)), finished: finished.clone() });
        let root_set = Arc::new(AtomicBool::new(false));
        let watchdog = Watchdog {
            tree: tree.clone(),
            pos: pos.clone(),
            limits,
            multipv: settings.multipv,
            slack: Duration::from_millis((self.opts.hard_margin_ms() / 2).min(WATCHDOG_SLACK_MS)),
            control: control.clone(),
            answer: answer.clone(),
            root_set: root_set.clone(),
        };
        let search_tree = tree.clone();
        let handle = std::thread::Builder::new()
            .name("search".into())
            .spawn(move || {
                let tree = search_tree;
                let result = catch_unwind(AssertUnwindSafe(|| {
                    {
                        let mut t = tree.lock().unwrap_or_else(|e| e.into_inner());
                        t.set_root(&pos);
                        t.set_draw_values(draw_values);
                        // Analysis and pondering have no end of their own: at the memory
                        // cap they free the least-visited subtrees and go on.
                        t.set_prune_when_full(limits.infinite || limits.ponder);
                    }
                    root_set.store(true, Ordering::SeqCst);
                    driver::run(&tree, evaluators, &encoder, &limits, &settings, &ctl, &*on_info)
                }));
                let (outcome, workers) = match result {
                    Ok((o, w)) => (o, Some(w)),
                    Err(p) => (failed(&pos, panic_text(&p)), None),
                };
                // A diagnostic, off by default: GUIs may not read stderr (`KOMA_LOG=debug`).
                log::debug!(
                    "koma-usi: search stopped ({:?}) after {} ms, {} simulations",
                    outcome.stopped_by,
                    outcome.info.time_ms,
                    outcome.info.nodes
                );
                if !answer.give(outcome) {
                    log::debug!("koma-usi: the watchdog answered at the hard limit");
                }
                // The workers finish their last batch after the move is out; until then
                // the next search takes a fresh tree ([`Core::is_searching`]).
                if let Some(w) = workers {
                    w.join();
                }
            })
            .map_err(EngineError::SearchThread)?;
        // The watchdog ends with the search's answer (it polls every millisecond or two).
        if watchdog.needed() {
            std::thread::Builder::new()
                .name("search-watchdog".into())
                .spawn(move || watchdog.run())
                .map_err(EngineError::SearchThread)?;
        }
        self.running = Some(Running { handle, control, finished, tree });
        Ok(())
    }
}

/// Test-only: the environment variable `KOMA_TEST_EVAL_DELAY_MS` makes every forward pass
/// of the engine's searches this many milliseconds slower (a sleep before it), so that
/// tests can check the clock against slow evaluations. Unset (always, in play): no delay.
pub const EVAL_DELAY_ENV: &str = "KOMA_TEST_EVAL_DELAY_MS";

fn eval_delay() -> Option<Duration> {
    let ms: u64 = std::env::var(EVAL_DELAY_ENV).ok()?.trim().parse().ok()?;
    (ms > 0).then(|| Duration::from_millis(ms))
}

/// The engine's leaf evaluator: a forward pass in the search thread, slowed down only by
/// [`EVAL_DELAY_ENV`].
struct SearchEvaluator {
    inner: DirectEvaluator,
    delay: Option<Duration>,
}

impl LeafEvaluator for SearchEvaluator {
    type Error = EvalError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&nn::Evaluation, EvalError> {
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
        self.inner.evaluate(inputs, n)
    }
}

/// The most a search under a clock waits for the last search's threads to finish their
/// forward passes (at most a tenth of its hard limit) before it takes a fresh tree.
const PREVIOUS_WAIT_MS: u64 = 30;

/// The most the watchdog waits past the hard limit for the search's own answer (half the
/// hard margin when that is smaller): the search stops at its hard limit and then runs its
/// root checks up to it, so in the normal case its answer comes first.
pub const WATCHDOG_SLACK_MS: u64 = 50;

/// The answer of one search, given once: by the search or by its watchdog.
struct Answer {
    on_done: Mutex<Option<Box<dyn FnOnce(SearchOutcome) + Send>>>,
    finished: Arc<AtomicBool>,
}

impl Answer {
    /// Reports `outcome` unless an answer went out already; whether it did.
    fn give(&self, outcome: SearchOutcome) -> bool {
        let Some(f) = self.on_done.lock().unwrap_or_else(|e| e.into_inner()).take() else { return false };
        self.finished.store(true, Ordering::SeqCst);
        f(outcome);
        true
    }

    fn given(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }
}

/// Holds a search's hard limit whatever its threads are doing (see [`Core::start`]).
struct Watchdog {
    tree: Arc<Mutex<PlayerTree>>,
    pos: Position,
    limits: Limits,
    multipv: usize,
    slack: Duration,
    control: Arc<Control>,
    answer: Arc<Answer>,
    /// Set once the tree's root is this search's position.
    root_set: Arc<AtomicBool>,
}

/// How often the watchdog notes the search's best move.
const WATCHDOG_SAMPLE: Duration = Duration::from_millis(10);

impl Watchdog {
    /// Only a search under a clock has a hard limit.
    fn needed(&self) -> bool {
        self.limits.budget.is_some() && !self.limits.infinite
    }

    /// When the answer is due: the hard limit plus the slack from the clock's start
    /// (the ponderhit when pondering; `None` before it).
    fn deadline(&self) -> Option<Instant> {
        let b = self.limits.budget?;
        let start = if self.limits.ponder { self.control.ponderhit_at()? } else { self.limits.origin? };
        Some(start + Duration::from_millis(b.hard) + self.slack)
    }

    fn run(self) {
        // The best move and its expected reply, as last seen.
        let mut seen: Option<(Move, Option<Move>, u64)> = None;
        let mut next_sample = Instant::now();
        loop {
            if self.answer.given() {
                return;
            }
            let now = Instant::now();
            let deadline = self.deadline();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            if now >= next_sample && self.root_set.load(Ordering::SeqCst) {
                if let Ok(t) = self.tree.try_lock() {
                    if let Some(best) = t.best_move() {
                        let reply = t.pv_from(best).get(1).copied();
                        seen = Some((best, reply, t.started()));
                    }
                }
                next_sample = now + WATCHDOG_SAMPLE;
            }
            let nap = deadline.map_or(Duration::from_millis(2), |d| d.saturating_duration_since(now));
            std::thread::sleep(nap.min(Duration::from_millis(2)));
        }
        self.control.stop();
        let elapsed = self.limits.origin.map_or(Duration::ZERO, |o| o.elapsed());
        // The tree if it is free (a few tries), else what was seen last.
        let mut outcome = None;
        for _ in 0..3 {
            if self.answer.given() {
                return;
            }
            if self.root_set.load(Ordering::SeqCst) {
                if let Ok(t) = self.tree.try_lock() {
                    let info = search::report::snapshot(&t, elapsed, self.multipv);
                    outcome = Some(search::report::tree_outcome(&t, info, StopReason::Time));
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let outcome = outcome.unwrap_or_else(|| {
            let mut o = SearchOutcome::failed(seen.map(|s| s.0), SearchError::Panic(String::new()));
            o.error = None;
            o.ponder = seen.and_then(|s| s.1);
            o.stopped_by = StopReason::Time;
            o.info.time_ms = elapsed.as_millis() as u64;
            o.info.nodes = seen.map_or(0, |s| s.2);
            if o.best.is_none() {
                // Not one evaluation came back in time: any legal move beats losing on time.
                o.best = self.pos.legal_moves().first().copied();
            }
            o
        });
        if self.answer.give(outcome) {
            log::debug!("koma-usi: the watchdog answered at the hard limit ({} ms)", elapsed.as_millis());
        }
    }
}

impl Core {
    /// Starts solving `pos` as a tsume problem (`go mate`) in a new thread, until a
    /// verdict, `deadline` or [`Core::stop`]; `on_done` receives the outcome. Needs no
    /// network.
    pub fn start_mate(
        &mut self,
        pos: Position,
        deadline: Option<std::time::Instant>,
        on_done: Box<dyn FnOnce(MateOutcome) + Send>,
    ) -> Result<(), EngineError> {
        if self.is_searching() {
            return Err(EngineError::AlreadySearching);
        }
        if pos.variant() != self.opts.variant {
            return Err(EngineError::WrongVariant { position: pos.variant(), option: self.opts.variant });
        }
        let mib = self.opts.mate_hash_mib;
        let solver = match &self.mate {
            Some((m, s)) if *m == mib && !s.is_poisoned() => s.clone(),
            _ => {
                // Free the old table before making the new one.
                self.mate = None;
                let s = Arc::new(Mutex::new(MateSolver::new(mib)));
                self.mate = Some((mib, s.clone()));
                s
            }
        };
        let control = Arc::new(Control::new());
        let ctl = control.clone();
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fin = finished.clone();
        let handle = std::thread::Builder::new()
            .name("mate".into())
            .stack_size(MATE_STACK_BYTES)
            .spawn(move || {
                let limits = MateLimits { deadline, ..MateLimits::default() };
                let result = catch_unwind(AssertUnwindSafe(|| {
                    solver.lock().unwrap_or_else(|e| e.into_inner()).solve(&pos, &limits, &ctl)
                }));
                let outcome = match result {
                    Ok(Ok(report)) => MateOutcome::Report(report),
                    Ok(Err(why)) => MateOutcome::Refused(why),
                    Err(p) => MateOutcome::Panicked(panic_text(&p)),
                };
                fin.store(true, std::sync::atomic::Ordering::SeqCst);
                on_done(outcome);
            })
            .map_err(EngineError::SearchThread)?;
        let tree = self.tree.clone();
        self.running = Some(Running { handle, control, finished, tree });
        Ok(())
    }
}

fn failed(pos: &Position, panic: String) -> SearchOutcome {
    SearchOutcome::failed(pos.legal_moves().first().copied(), SearchError::Panic(panic))
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

fn load(key: &NetKey) -> Result<Network, EngineError> {
    if key.model.as_os_str() == UNIFORM {
        let network = nn::Network::uniform(key.variant);
        return Ok(Network {
            encoder: Arc::new(network.encoder.clone()),
            evaluators: vec![network.evaluator.clone()],
            network,
            key: key.clone(),
            description: format!("uniform evaluator ({})", key.variant),
            gpus: 0,
            portable: false,
        });
    }
    let path = &key.model;
    // TorchThreads 0: half the cores of a small CPU. On 2 cores that is 1.5 times the nodes/s
    // of libtorch's two threads, and 31-0-9 against 27-0-13 vs fsf5 at byoyomi 1 s
    // (docs/strength.md, "At a clock").
    #[cfg(feature = "torch")]
    model::set_torch_threads(key.torch_threads, model::CpuShare::HalfOfSmall);
    // A device named twice holds two copies of the network, whose threads then prepare and
    // hand back their batches side by side (one copy serialises them).
    let devices: Vec<&str> = key.device.split(',').map(str::trim).collect();
    let torch = torch_backend();
    let load_error = |why: BackendError| EngineError::Load { why: Box::new(why) };
    // The network brings the encoder its input planes were trained with.
    let (network, evaluators, backends) =
        nn::load_network(path, &Expected::variant(key.variant), key.backend, &devices, torch).map_err(load_error)?;
    let on_gpu = |(d, b): (&&str, &Backend)| *b == Backend::Torch && torch.is_some_and(|t| (t.is_gpu)(d) == Ok(true));
    let gpus = devices.iter().zip(&backends).filter(|&p| on_gpu(p)).count();
    let portable = backends.iter().all(|b| *b == Backend::Cpu);
    let batch = crate::options::leaves_per_batch(key.batch_size, gpus > 0);
    // Warm-up: the first forward passes are slow (allocation, cuDNN autotuning).
    let zeros = vec![0.0f32; batch * network.encoder.input_len()];
    for evaluator in &evaluators {
        for _ in 0..2 {
            evaluator.evaluate(&zeros, batch)?;
        }
    }
    let meta = network.meta.as_ref().expect("a loaded network has metadata");
    let on: Vec<String> = evaluators.iter().map(|e| e.describe()).collect();
    let description = format!(
        "{} (step {}, {} blocks x {} channels) on {} (Backend {}{})",
        path.display(),
        meta.step,
        meta.net.blocks,
        meta.net.channels,
        on.join(", "),
        key.backend,
        if torch.is_none() { "; this build has the CPU backend only" } else { "" },
    );
    let encoder = Arc::new(network.encoder.clone());
    Ok(Network { network, evaluators, encoder, key: key.clone(), description, gpus, portable })
}

/// libtorch, when this build has it (the `torch` feature).
fn torch_backend() -> Option<&'static nn::TorchBackend> {
    #[cfg(feature = "torch")]
    return Some(&model::TORCH_BACKEND);
    #[cfg(not(feature = "torch"))]
    None
}

// The tests write tiny networks with libtorch.
#[cfg(all(test, feature = "torch"))]
mod tests {
    use super::*;
    use model::LeafMaterial;

    /// A tiny shogi network recording `record`, written as a model file `dir/name`.
    fn model_file(dir: &Path, name: &str, record: Option<LeafMaterial>) -> PathBuf {
        let cfg = model::NetConfig::tiny();
        let net = model::Net::new(&cfg, Encoder::for_net(Variant::Shogi, &cfg).net_shape(), 1, model::tch::Device::Cpu)
            .unwrap();
        let stem = dir.join(format!("{name}-checkpoint"));
        let info = model::CheckpointInfo {
            variant: "shogi".into(),
            encoder_version: model::encoding::ENCODER_VERSION,
            step: 3,
            leaf_material: record,
        };
        model::save_checkpoint(&net, &stem, &info).unwrap();
        let file = dir.join(name);
        model::export_model(&stem, &file).unwrap();
        file
    }

    /// Searches the start position for `nodes` simulations; the search must not fail.
    fn search_from_start(core: &mut Core, nodes: u64) {
        let (tx, rx) = std::sync::mpsc::channel();
        let limits = Limits { nodes: Some(nodes), ..Limits::default() };
        let done = Box::new(move |o: SearchOutcome| tx.send(o).unwrap());
        core.start(Position::startpos(Variant::Shogi), limits, Box::new(|_| {}), done).unwrap();
        let outcome = rx.recv_timeout(std::time::Duration::from_secs(120)).unwrap();
        core.stop();
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
    }

    /// The leaf material mix and scale of the tree a search from the start runs with.
    fn searched_with(core: &mut Core) -> (f32, f32) {
        search_from_start(core, 4);
        let tree = core.tree.lock().unwrap();
        let params = tree.params();
        assert_eq!(params, &core.search_config());
        (params.leaf_material_mix, params.leaf_material_scale)
    }

    /// `MaterialMix` and `MaterialScale` at auto (the default) search with the setting the
    /// network file records; `setoption` overrides it; a network without a record, or a
    /// change of network, is the network's own again.
    #[test]
    fn auto_takes_the_networks_leaf_material_and_setoption_overrides_it() {
        let dir = tempfile::tempdir().unwrap();
        let record = LeafMaterial { mix: 0.5, scale: 36.0 };
        let with = model_file(dir.path(), "with.safetensors", Some(record));
        let without = model_file(dir.path(), "without.safetensors", None);
        let mut core = Core::new();
        for (name, value) in [("ModelFile", with.to_str().unwrap()), ("Device", "cpu"), ("BatchSize", "4")] {
            core.set_option(name, value).unwrap();
        }
        core.load_network().unwrap();
        assert_eq!(core.network_leaf_material(), Some(record));
        assert_eq!(searched_with(&mut core), (0.5, 36.0));
        let note = core.leaf_material_note().unwrap();
        assert!(note.contains("material mix 50% (the network's) at scale 36 (the network's)"), "{note}");

        core.set_option("MaterialMix", "25").unwrap();
        assert_eq!(searched_with(&mut core), (0.25, 36.0));
        core.set_option("MaterialScale", "6").unwrap();
        assert_eq!(searched_with(&mut core), (0.25, 6.0));
        assert_eq!(core.leaf_material_note(), None);
        core.set_option("MaterialMix", "0").unwrap();
        assert_eq!(searched_with(&mut core), (0.0, 6.0));

        // Back to auto, then a network that records nothing: 0 and 6.
        core.set_option("MaterialMix", "-1").unwrap();
        core.set_option("MaterialScale", "-1").unwrap();
        assert_eq!(searched_with(&mut core), (0.5, 36.0));
        core.set_option("ModelFile", without.to_str().unwrap()).unwrap();
        core.load_network().unwrap();
        assert_eq!(core.network_leaf_material(), None);
        assert_eq!(core.leaf_material_note(), None);
        assert_eq!(searched_with(&mut core), (0.0, 6.0));
        // And the recording one again: the tree follows the network.
        core.set_option("ModelFile", with.to_str().unwrap()).unwrap();
        core.load_network().unwrap();
        assert_eq!(searched_with(&mut core), (0.5, 36.0));
    }

    /// `Device cpu,cpu` loads the network twice and the search threads take the copies in
    /// turn: both evaluate leaves (libtorch's evaluators, which count their batches). The
    /// description names both.
    #[test]
    fn threads_spread_over_the_devices_of_device() {
        let dir = tempfile::tempdir().unwrap();
        let file = model_file(dir.path(), "net.safetensors", None);
        let mut core = Core::new();
        for (name, value) in [
            ("ModelFile", file.to_str().unwrap()),
            ("Backend", "torch"),
            ("Device", "cpu,cpu"),
            ("Threads", "2"),
            ("BatchSize", "4"),
        ] {
            core.set_option(name, value).unwrap();
        }
        let description = core.load_network().unwrap();
        assert_eq!(description.matches("torch Cpu").count(), 2, "{description}");
        let net = core.net.as_ref().unwrap();
        assert_eq!((net.evaluators.len(), net.gpus), (2, 0));
        let batches = |core: &Core| -> Vec<u64> {
            core.net.as_ref().unwrap().evaluators.iter().map(|e| e.copy_stats().unwrap().batches).collect()
        };
        let before = batches(&core);
        search_from_start(&mut core, 200);
        let after = batches(&core);
        assert!(after.iter().zip(&before).all(|(a, b)| a > b), "batches before {before:?}, after {after:?}");
        core.set_option("Device", "cpu,gpu9").unwrap();
        assert!(core.load_network().is_err());
    }
}
