//! The periodic evaluation of `koma train` ([`TrainingEval`]): its opponents come from
//! `eval.opponents` (`random`, `greedy`, `previous`, a rung of the ladder such as `fsf1`,
//! or an arena player `NAME=SPEC`), and each is played in a match of the arena
//! ([`arena::network_match`]). Against a rung the result is also a ladder Elo: the rung's
//! Elo (`arena/ladder.toml`) plus the measured difference; over all rungs played, the
//! maximum-likelihood placement (`arena::ladder::place`). The results are an
//! [`EvalReport`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arena::koma_player::{KomaConfig, KomaNetwork};
use arena::ladder::{finite_rating, place, Placement};
use arena::network_match::{
    parse_player, play_match_observed, random_openings, MatchOutcome, MatchSettings, Opponent, OpponentError,
    ENGINE_TIMEOUT,
};
use arena::{PlayerSpec, Wdl};
use rules::Variant;
use search::SearchConfig;

use super::report::{EvalReport, OpponentResult};
use crate::config::{EvalConfig, EvalSearch};

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
    Search(#[from] arena::koma_player::KomaConfigError),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensorboard::TensorBoardLog;
    use model::encoding::Encoder;
    use model::tch::Device;

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

        let mut tb = TensorBoardLog::new(dir.path().join("tb")).unwrap();
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
