//! Evaluation games, played through the arena's match harness (`arena::schedule`): the
//! network, searching as the arena's koma player does (a fixed number of simulations per
//! move, leaves evaluated in batches with virtual loss, no noise), against a built-in
//! player, an engine of the ladder, or another network. All games of a match run at once
//! on threads, and every network's leaves from all games go through one batching service
//! (`model::Batcher`), so a forward pass holds the leaves of many games. Games are
//! adjudicated by the rules with a maximum length; a draw counts half.
//!
//! [`TrainingEval`] is the periodic evaluation of `koma train`: its opponents come from
//! `eval.opponents` (`random`, `greedy`, `previous`, a rung of the ladder such as
//! `fsf1`, or an arena player `NAME=SPEC`). Against a rung the result is also a ladder
//! Elo: the rung's Elo (`arena/ladder.toml`) plus the measured difference; over all rungs
//! played, the maximum-likelihood placement (`arena::ladder::place`). It writes one line
//! per opponent to `eval.jsonl` (`step`, `elapsed_seconds`, `opponent`, `wins`, `draws`,
//! `losses`, `score`, `elo` (finite: a sweep counts as having dropped half a game),
//! `mean_length`, and `elo_low`, `elo_high`, `los`, `simulations`, `seconds`,
//! `faults` (games lost by a fault of ours, of theirs), `mean_batch` (positions per
//! forward pass of our network), and for a rung `opponent_ladder_elo`, `ladder_elo`, `ladder_elo_low`,
//! `ladder_elo_high`; infinite bounds are null). TensorBoard: `eval/score_vs_NAME`,
//! `eval/elo_vs_NAME`, and `eval/ladder_elo`: the placement over every rung played
//! (finite; `crate::elo_plot` draws the same from `eval.jsonl`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arena::koma::{KomaConfig, KomaLoadError, KomaNetwork, KomaPlayer};
use arena::ladder::{finite_rating, place, Placement};
use arena::player::Player;
use arena::schedule::{play_pair, PairOutcome, PairPlan, Roster, Rules};
use arena::{Opening, PlayerSpec, PlayerStartError, TimeControl, Wdl};
use model::tch::Device;
use model::BatcherStats;
use rules::{EndRules, Position, Variant};
use search::{Rng, SearchConfig};

use crate::config::{EvalConfig, EvalSearch};
use crate::opponents::{parse_player, OpponentError};
use crate::tb::Tb;

/// Who the network plays.
pub enum Opponent {
    /// A player of the arena: `random`, `greedy`, an engine.
    Player(PlayerSpec),
    /// Another network (an earlier checkpoint), searching like ours.
    Network(KomaNetwork),
}

/// How a match of evaluation games is played.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    pub games: usize,
    /// Simulations per network move (1 = the raw policy's favourite).
    pub simulations: u32,
    /// Leaves per network evaluation of one game's search (virtual loss between them).
    pub batch_size: usize,
    /// Games at once; 0 = all of them, at most [`MAX_CONCURRENCY`].
    pub concurrency: usize,
    pub max_plies: u32,
    pub search: SearchConfig,
    /// Each opening is played twice, colours swapped.
    pub openings: Vec<Opening>,
    pub seed: u64,
    /// Working directory of engine processes.
    pub workdir: PathBuf,
    /// When set (a signal), the match stops within a move, returning the games finished
    /// so far.
    pub stop: Option<Arc<AtomicBool>>,
}

/// `pairs` openings of `plies` uniformly random plies from the start position (each
/// redrawn when the random moves end the game).
pub fn random_openings(variant: Variant, pairs: usize, plies: u32, seed: u64) -> Vec<Opening> {
    let mut rng = Rng::new(seed);
    let rules = EndRules::default();
    let ended = |p: &Position| p.outcome(&rules).is_some() || p.can_declare();
    (0..pairs.max(1))
        .map(|_| {
            let mut moves = Vec::new();
            for _ in 0..20 {
                let mut pos = Position::startpos(variant);
                moves.clear();
                for _ in 0..plies {
                    let legal = pos.legal_moves();
                    if legal.is_empty() || ended(&pos) {
                        break;
                    }
                    let mv = legal[rng.below(legal.len())];
                    pos.play(mv);
                    moves.push(mv);
                }
                if !ended(&pos) {
                    break;
                }
            }
            let text = std::iter::once("startpos moves".to_string()).chain(moves.iter().map(|m| m.to_usi()));
            Opening { text: text.collect::<Vec<_>>().join(" "), base: Position::startpos(variant), moves }
        })
        .collect()
}

/// One side of an evaluation match.
enum Seat {
    Koma(KomaNetwork),
    Spec(PlayerSpec),
}

/// The two players of an evaluation match: 0 is ours.
struct EvalRoster<'a> {
    variant: Variant,
    seats: [Seat; 2],
    config: KomaConfig,
    nodes: TimeControl,
    workdir: &'a Path,
}

impl Roster for EvalRoster<'_> {
    fn create(&self, index: usize, seed: u64) -> Result<Box<dyn Player>, PlayerStartError> {
        match &self.seats[index] {
            Seat::Koma(net) => Ok(Box::new(KomaPlayer::new(net.clone(), self.config.clone(), self.variant)?)),
            Seat::Spec(spec) => spec.create(self.variant, seed, self.workdir, ENGINE_TIMEOUT),
        }
    }

    fn limit(&self, index: usize) -> TimeControl {
        match &self.seats[index] {
            Seat::Koma(_) => self.nodes,
            Seat::Spec(spec) => spec.effective_limit(self.nodes),
        }
    }
}

/// The result of [`play_match`].
#[derive(Clone, Debug, Default)]
pub struct MatchOutcome {
    /// From our side.
    pub pair: PairOutcome,
    /// Our network's batching service: forward passes and positions evaluated.
    pub batches: BatcherStats,
}

/// How long an engine may take to start (its handshake) or to answer a move.
const ENGINE_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a batching service gathers the leaves of the games for one forward pass.
/// All games run at once, so waiting pays: 20 games at 128 simulations, batch 8, on 2
/// cores, made 102 positions per pass with 1 ms against 69 with none, and took 23.4 s
/// of CPU instead of 25.3.
const BATCH_WAIT: Duration = Duration::from_millis(1);

/// Games at once when the settings say "all": each is a thread with a search tree, and
/// 64 games of 8 leaves fill forward passes of 512 positions.
pub const MAX_CONCURRENCY: usize = 64;

/// Plays `s.games` games of `ours` against `opponent`.
pub fn play_match(variant: Variant, ours: &KomaNetwork, opponent: &Opponent, s: &MatchSettings) -> MatchOutcome {
    play_match_observed(variant, ours, opponent, s, &mut |_| {})
}

/// [`play_match`] that shows `observe` the result after every finished game.
pub fn play_match_observed(
    variant: Variant,
    ours: &KomaNetwork,
    opponent: &Opponent,
    s: &MatchSettings,
    observe: &mut dyn FnMut(&PairOutcome),
) -> MatchOutcome {
    let concurrency = if s.concurrency == 0 { s.games.min(MAX_CONCURRENCY) } else { s.concurrency }.max(1);
    let max_batch = concurrency * s.batch_size.max(1);
    // One batching service per network, shared by the games (dropped after the match).
    let (ours_service, ours) = ours.batched(max_batch, BATCH_WAIT, "koma-eval");
    let (theirs_service, theirs) = match opponent {
        Opponent::Network(net) => {
            let (service, net) = net.batched(max_batch, BATCH_WAIT, "koma-eval-opponent");
            (service, Seat::Koma(net))
        }
        Opponent::Player(spec) => (None, Seat::Spec(spec.clone())),
    };
    let roster = EvalRoster {
        variant,
        seats: [Seat::Koma(ours), theirs],
        // A network loaded from a file that records its leaf material setting (a checkpoint
        // of `koma evaluate`, an opponent's) plays with it; one in memory (the learner's)
        // with the run's search as it is (`KomaConfig::from_network`).
        config: KomaConfig { search: s.search.clone(), batch_size: s.batch_size.max(1), ..KomaConfig::default() },
        nodes: TimeControl::Nodes(s.simulations.max(1) as u64),
        workdir: &s.workdir,
    };
    let rules = Rules {
        tc: roster.nodes,
        end_rules: EndRules { max_plies: Some(s.max_plies), ..EndRules::default() },
        time_margin: Duration::from_secs(1),
        hang_timeout: ENGINE_TIMEOUT,
    };
    let plan =
        PairPlan { games: s.games, openings: &s.openings, rules, concurrency, seed: s.seed, stop: s.stop.as_deref() };
    let pair = play_pair(&roster, &plan, observe);
    drop(theirs_service);
    let batches = ours_service.map(|b| b.shutdown()).unwrap_or_default();
    MatchOutcome { pair, batches }
}

/// Loads a checkpoint as an evaluation opponent on `device`.
pub fn load_network(path: &Path, variant: Variant, device: Device) -> Result<KomaNetwork, KomaLoadError> {
    KomaNetwork::load_on(path, device, variant)
}

/// Why the evaluation of a run cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum EvalSetupError {
    #[error("eval.ladder: {0}")]
    Ladder(#[from] arena::ladder::LadderError),
    #[error("eval.opponents: {0}")]
    Opponent(#[from] OpponentError),
    #[error("{}: {source}", path.display())]
    Workdir { path: PathBuf, source: std::io::Error },
    #[error("eval.openings: {0}")]
    Openings(#[from] dataio::OpeningsError),
    /// A search that play cannot use (a Gumbel root).
    #[error("eval.search: {0}")]
    Search(#[from] arena::koma::KomaConfigError),
}

/// The search of evaluation games (`eval.search`): the engine's defaults (PUCT) or the
/// config's `[search]` table. The engine's search keeps the config's leaf material mix
/// (and its check plies):
/// the network learned its values beside it, and the engine plays it so
/// (`SearchConfig::leaf_material_mix`).
pub fn eval_search(ecfg: &EvalConfig, selfplay: &SearchConfig) -> SearchConfig {
    match ecfg.search {
        EvalSearch::Selfplay => selfplay.clone(),
        EvalSearch::Engine => SearchConfig {
            leaf_material_mix: selfplay.leaf_material_mix,
            leaf_material_scale: selfplay.leaf_material_scale,
            leaf_material_check_plies: selfplay.leaf_material_check_plies,
            ..SearchConfig::for_play()
        },
    }
}

/// An opponent of the in-training evaluation.
struct TrainingOpponent {
    name: String,
    /// `None`: the previous evaluation's checkpoint.
    player: Option<PlayerSpec>,
    ladder_elo: Option<f64>,
}

/// The periodic evaluation of `koma train`: opponents and settings, fixed for the run.
pub struct TrainingEval {
    variant: Variant,
    opponents: Vec<TrainingOpponent>,
    /// Without openings when they are drawn for each evaluation (`random_plies`).
    settings: MatchSettings,
    random_plies: u32,
}

/// One opponent's result in an evaluation.
#[derive(Clone, Debug)]
pub struct OpponentResult {
    pub name: String,
    pub outcome: PairOutcome,
    /// Mean positions per forward pass of our network.
    pub mean_batch: f64,
    pub seconds: f64,
    /// The opponent's ladder Elo, and ours from this match, when it is a rung.
    pub opponent_ladder_elo: Option<f64>,
    pub ladder: Option<Placement>,
}

/// The results of one evaluation.
#[derive(Clone, Debug)]
pub struct EvalReport {
    pub step: u64,
    pub simulations: u32,
    pub results: Vec<OpponentResult>,
    /// Placement over every rung played, with a finite rating for plots.
    pub ladder: Option<(Placement, f64)>,
    /// A signal stopped the evaluation: a partial match is no measurement.
    pub stopped: bool,
}

impl TrainingEval {
    /// Resolves the opponents of `ecfg`. Engines that do not start are left out, each
    /// with a warning (returned), so that a missing engine does not stop a run.
    pub fn new(
        ecfg: &EvalConfig,
        selfplay_search: &SearchConfig,
        variant: Variant,
        workdir: &Path,
    ) -> Result<(TrainingEval, Vec<String>), EvalSetupError> {
        let ladder = ecfg.ladder.load().map_err(EvalSetupError::Ladder)?;
        let mut opponents = Vec::new();
        let mut warnings = Vec::new();
        std::fs::create_dir_all(workdir)
            .map_err(|source| EvalSetupError::Workdir { path: workdir.to_path_buf(), source })?;
        for text in &ecfg.opponents {
            if text == "previous" {
                opponents.push(TrainingOpponent { name: text.clone(), player: None, ladder_elo: None });
                continue;
            }
            let (spec, ladder_elo) = parse_player(text, &ladder)?;
            // The ladder's ratings hold in its own variant only.
            let ladder_elo = ladder_elo.filter(|_| ladder.variant == variant);
            if let Err(why) = spec.create(variant, 1, workdir, ENGINE_TIMEOUT) {
                warnings
                    .push(format!("evaluation opponent {} left out: {why} (scripts/install-engines.sh)", spec.name));
                continue;
            }
            opponents.push(TrainingOpponent { name: spec.name.clone(), player: Some(spec), ladder_elo });
        }
        let openings = match &ecfg.openings {
            None => Vec::new(),
            Some(path) => arena::load_openings(variant, path).map_err(EvalSetupError::Openings)?,
        };
        let settings = MatchSettings {
            games: ecfg.games,
            simulations: ecfg.simulations,
            batch_size: ecfg.batch_size,
            concurrency: ecfg.concurrency,
            max_plies: ecfg.max_plies,
            search: eval_search(ecfg, selfplay_search),
            openings,
            seed: 0,
            workdir: workdir.to_path_buf(),
            stop: None,
        };
        // The network plays with the engine's search: a Gumbel root is refused up front.
        let ours = KomaConfig { search: settings.search.clone(), ..KomaConfig::default() };
        ours.check()?;
        Ok((TrainingEval { variant, opponents, settings, random_plies: ecfg.random_plies }, warnings))
    }

    /// Whether an opponent is the previous checkpoint.
    pub fn wants_previous(&self) -> bool {
        self.opponents.iter().any(|o| o.player.is_none())
    }

    /// Plays every opponent (`previous` only when given), showing a progress bar per
    /// match when `show`. A set `stop` (a signal) ends the evaluation within a move; the
    /// report then says `stopped` and holds no measurement.
    pub fn run(
        &self,
        ours: &KomaNetwork,
        previous: Option<&KomaNetwork>,
        step: u64,
        seed: u64,
        stop: Option<Arc<AtomicBool>>,
        show: bool,
    ) -> EvalReport {
        let stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst));
        let mut settings = MatchSettings { seed, stop: stop.clone(), ..self.settings.clone() };
        if settings.openings.is_empty() {
            settings.openings = random_openings(self.variant, settings.games.div_ceil(2), self.random_plies, seed);
        }
        let mut results = Vec::new();
        for o in &self.opponents {
            let opponent = match (&o.player, previous) {
                (Some(spec), _) => Opponent::Player(spec.clone()),
                (None, Some(net)) => Opponent::Network(net.clone()),
                (None, None) => continue,
            };
            let started = Instant::now();
            let label = format!("eval @{step} vs {}", o.name);
            let bar = progress::Reporter::shown_if(show, &label, Some(settings.games as u64), "games");
            let MatchOutcome { pair: outcome, batches } =
                play_match_observed(self.variant, ours, &opponent, &settings, &mut |r| {
                    bar.set_message(format!("+{} ={} -{}", r.wdl.wins, r.wdl.draws, r.wdl.losses));
                    bar.set_position(r.wdl.games() as u64);
                });
            bar.finish();
            if stopped() {
                return EvalReport { step, simulations: settings.simulations, results, ladder: None, stopped: true };
            }
            let ladder = o.ladder_elo.map(|e| Placement::against(e, &outcome.wdl));
            let seconds = started.elapsed().as_secs_f64();
            results.push(OpponentResult {
                name: o.name.clone(),
                outcome,
                mean_batch: batches.mean_batch(),
                seconds,
                opponent_ladder_elo: o.ladder_elo,
                ladder,
            });
        }
        let rungs: Vec<(f64, Wdl)> =
            results.iter().filter_map(|r| r.opponent_ladder_elo.map(|e| (e, r.outcome.wdl))).collect();
        let ladder = place(&rungs).zip(finite_rating(&rungs));
        EvalReport { step, simulations: settings.simulations, results, ladder, stopped: false }
    }
}

impl EvalReport {
    /// One line for the console.
    pub fn line(&self) -> String {
        let mut line = format!("eval @{} ({} simulations):", self.step, self.simulations);
        for r in &self.results {
            let w = &r.outcome.wdl;
            line += &format!(
                " {} {:.2} (+{} ={} -{}, Elo {:+.0}, {:.0} s)",
                r.name,
                w.score(),
                w.wins,
                w.draws,
                w.losses,
                w.finite_elo(),
                r.seconds
            );
        }
        if let Some((p, _)) = &self.ladder {
            line += &format!("; ladder Elo {:+.0} [{:+.0}, {:+.0}]", p.elo, p.low, p.high);
        }
        line
    }

    /// Appends the records to `eval.jsonl` and the scalars to TensorBoard.
    pub fn write(&self, tb: &mut Tb, jsonl: &Path, elapsed_seconds: f64) -> std::io::Result<()> {
        let mut lines = Vec::new();
        for r in &self.results {
            let w = &r.outcome.wdl;
            let (low, high) = w.elo_interval();
            tb.scalar(&format!("eval/score_vs_{}", r.name), w.score(), self.step);
            tb.scalar(&format!("eval/elo_vs_{}", r.name), w.finite_elo(), self.step);
            let rung = r.opponent_ladder_elo.zip(r.ladder);
            let rec = dataio::EvalRecord {
                step: self.step,
                elapsed_seconds,
                opponent: r.name.clone(),
                wins: w.wins,
                draws: w.draws,
                losses: w.losses,
                score: w.score(),
                elo: w.finite_elo(),
                mean_length: r.outcome.mean_plies(),
                elo_low: Some(low),
                elo_high: Some(high),
                los: w.los(),
                simulations: self.simulations,
                seconds: r.seconds,
                faults: r.outcome.faults,
                mean_batch: r.mean_batch,
                opponent_ladder_elo: rung.map(|(e, _)| e),
                ladder_elo: rung.map(|(_, p)| p.elo),
                ladder_elo_low: rung.map(|(_, p)| p.low),
                ladder_elo_high: rung.map(|(_, p)| p.high),
            };
            lines.push(rec);
        }
        if let Some((_, finite)) = &self.ladder {
            tb.scalar("eval/ladder_elo", *finite, self.step);
        }
        tb.flush();
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(jsonl)?;
        for rec in lines {
            writeln!(f, "{}", rec.to_line())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::encoding::Encoder;

    /// The engine's search plays at the players' c_puct and keeps the config's leaf
    /// material; `selfplay` hands over the whole `[search]` table.
    #[test]
    fn evaluation_games_search_as_the_engine_or_as_self_play() {
        let selfplay = SearchConfig { leaf_material_mix: 0.5, leaf_material_scale: 10.0, ..SearchConfig::default() };
        let engine = eval_search(&EvalConfig::default(), &selfplay);
        assert_eq!(
            (engine.c_puct, engine.leaf_material_mix, engine.leaf_material_scale),
            (search::PLAY_C_PUCT, 0.5, 10.0)
        );
        assert_ne!(engine.c_puct, selfplay.c_puct);
        let same = EvalConfig { search: EvalSearch::Selfplay, ..EvalConfig::default() };
        assert_eq!(eval_search(&same, &selfplay), selfplay);
    }

    fn settings(games: usize, simulations: u32, batch_size: usize) -> MatchSettings {
        MatchSettings {
            games,
            simulations,
            batch_size,
            concurrency: 0,
            max_plies: 60,
            search: SearchConfig::default(),
            openings: random_openings(Variant::Shogi, games.div_ceil(2), 2, 3),
            seed: 3,
            workdir: std::env::temp_dir(),
            stop: None,
        }
    }

    fn uniform() -> KomaNetwork {
        KomaNetwork::from_network(model::Network::uniform(Variant::Shogi))
    }

    #[test]
    fn random_openings_are_playable_and_distinct() {
        let o = random_openings(Variant::Shogi, 5, 4, 1);
        assert_eq!(o.len(), 5);
        for op in &o {
            assert_eq!(op.moves.len(), 4);
            assert!(op.position().outcome(&EndRules::default()).is_none());
            let again = Opening::parse(Variant::Shogi, &op.text).unwrap();
            assert_eq!(again.moves, op.moves);
        }
        assert!(o.windows(2).any(|w| w[0].moves != w[1].moves));
    }

    #[test]
    fn uniform_search_plays_full_games_against_players_and_networks() {
        let s = settings(4, 8, 4);
        let m = play_match(Variant::Shogi, &uniform(), &Opponent::Player("random=random".parse().unwrap()), &s);
        // Four games at once, up to 4 leaves each: forward passes of more than one leaf.
        assert!(m.batches.mean_batch() > 1.0, "{:?}", m.batches);
        let r = m.pair;
        assert_eq!(r.wdl.games(), 4);
        assert_eq!(r.faults, [0, 0]);
        assert!(r.mean_plies() > 2.0);
        let r = play_match(Variant::Shogi, &uniform(), &Opponent::Network(uniform()), &s).pair;
        assert_eq!(r.wdl.games(), 4);
    }

    /// A tiny torch network with or without the attack planes, with its own encoder.
    /// One torch thread, as `koma train` sets on small machines: many tiny forward passes
    /// wait on the synchronisation of torch's thread pool otherwise (50x slower on a
    /// loaded 2-core machine).
    fn torch(attack_planes: bool) -> KomaNetwork {
        use model::{NetConfig, Precision};
        model::set_torch_threads(1, model::CpuShare::Whole);
        let cfg = NetConfig {
            blocks: 1,
            channels: 8,
            value_channels: 2,
            value_hidden: 8,
            attack_planes,
            ..Default::default()
        };
        let shape = Encoder::for_net(Variant::Shogi, &cfg).net_shape();
        let net = model::Net::new(&cfg, shape, 1, Device::Cpu).unwrap();
        KomaNetwork::from_network(model::network_of_net(&net, Variant::Shogi, Device::Cpu, Precision::F32).unwrap())
    }

    #[test]
    fn networks_with_different_input_planes_meet() {
        let (attack, plain) = (torch(true), torch(false));
        assert_ne!(attack.network.encoder.input_len(), plain.network.encoder.input_len());
        let r = play_match(Variant::Shogi, &attack, &Opponent::Network(plain), &settings(2, 8, 4)).pair;
        assert_eq!(r.wdl.games(), 2);
        // A forward pass fed the wrong planes would fail and lose the game as a crash.
        assert_eq!(r.faults, [0, 0], "{r:?}");
        assert!(r.mean_plies() > 10.0, "{r:?}");
    }

    /// The network plays with the engine's search (PUCT root): `[eval] search = "selfplay"`
    /// with a Gumbel `[search]` is refused with the reason, not played as PUCT.
    #[test]
    fn a_gumbel_evaluation_search_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tcfg = EvalConfig { search: EvalSearch::Selfplay, opponents: vec![], ..EvalConfig::default() };
        let gumbel = SearchConfig { gumbel: true, ..SearchConfig::default() };
        let err = TrainingEval::new(&tcfg, &gumbel, Variant::Shogi, dir.path()).err().expect("refused");
        let err = err.to_string();
        assert!(err.contains("eval.search") && err.contains("PUCT"), "{err}");
        assert!(TrainingEval::new(&tcfg, &SearchConfig::default(), Variant::Shogi, dir.path()).is_ok());
    }

    #[test]
    fn training_evaluation_writes_scores_and_the_ladder_elo() {
        let dir = tempfile::tempdir().unwrap();
        let ecfg = EvalConfig {
            games: 4,
            simulations: 8,
            batch_size: 4,
            max_plies: 40,
            opponents: vec!["random".into(), "greedy".into(), "previous".into()],
            ..EvalConfig::default()
        };
        let (plan, warnings) =
            TrainingEval::new(&ecfg, &SearchConfig::default(), Variant::Shogi, &dir.path().join("engines")).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(plan.wants_previous());
        let report = plan.run(&torch(true), Some(&torch(false)), 100, 5, None, false);
        assert!(!report.stopped);
        let names: Vec<&str> = report.results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["random", "greedy", "previous"]);
        assert!(report.results.iter().all(|r| r.outcome.wdl.games() == 4));
        let (placement, finite) = report.ladder.unwrap();
        assert!(finite.is_finite() && placement.games == 8, "{placement:?}");
        let greedy = &report.results[1];
        let p = greedy.ladder.unwrap();
        assert_eq!(p.elo, arena::ladder::rung_rating("greedy").unwrap() + greedy.outcome.wdl.elo());
        assert!(report.line().contains("ladder Elo"), "{}", report.line());

        let mut tb = Tb::new(dir.path().join("tb")).unwrap();
        let jsonl = dir.path().join("eval.jsonl");
        report.write(&mut tb, &jsonl, 12.0).unwrap();
        let rows: Vec<serde_json::Value> =
            std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1]["opponent"], "greedy");
        assert_eq!(rows[1]["opponent_ladder_elo"], arena::ladder::rung_rating("greedy").unwrap());
        assert_eq!(rows[1]["wins"].as_u64().unwrap() as u32, greedy.outcome.wdl.wins);
        assert!(rows[1]["elo"].is_number() && rows[1]["simulations"] == 8);
        assert!(rows[2].get("ladder_elo").is_none(), "previous is no rung: {}", rows[2]);
        // Without the previous network, `previous` is skipped.
        assert_eq!(plan.run(&torch(true), None, 200, 6, None, false).results.len(), 2);
        // A set stop flag ends the evaluation at once, with no measurement.
        let stop = Arc::new(AtomicBool::new(true));
        let stopped = plan.run(&torch(true), None, 300, 7, Some(stop), false);
        assert!(stopped.stopped && stopped.results.is_empty());
    }
}
