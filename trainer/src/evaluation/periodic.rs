//! The periodic evaluation of `koma train` ([`TrainingEval`]): its opponents come from
//! `eval.opponents` (`random`, `greedy`, `previous`, a rung of the ladder such as `fsf1`,
//! `ladder` for the rungs around the network ([`super::staircase`], from the last
//! evaluation's rating), or an arena player `NAME=SPEC`), and each is played in a match of
//! the arena ([`arena::network_match`]). Against a rung the result is also a ladder Elo:
//! the rung's Elo (`arena/ladder.toml`) plus the measured difference; over all rungs
//! played, the maximum-likelihood placement (`arena::ladder::place`). The results are an
//! [`EvalReport`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arena::koma_player::{KomaConfig, KomaNetwork};
use arena::ladder::{finite_rating, place, Ladder, Placement};
use arena::network_match::{
    parse_player, play_match_observed, random_openings, MatchOutcome, MatchSettings, Opponent, ENGINE_TIMEOUT,
};
use arena::{PlayerSpec, Wdl};
use rules::Variant;
use search::SearchConfig;

use super::report::{EvalReport, OpponentResult};
use super::rungs::LadderPlan;
pub use super::setup_error::EvalSetupError;
use super::staircase::{first_rung, next_rung};
use crate::config::{EvalConfig, EvalSearch, LADDER, PREVIOUS};

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
    kind: OpponentKind,
    ladder_elo: Option<f64>,
}

enum OpponentKind {
    Player(Box<PlayerSpec>),
    /// The previous evaluation's checkpoint.
    Previous,
    /// The rungs around the network ([`super::staircase`]).
    Ladder,
}

/// One evaluation's matches: their settings, the step evaluated, whether bars show.
struct Round {
    settings: MatchSettings,
    step: u64,
    show: bool,
}

/// One evaluation: the checkpoint's step, the seed of its openings, the games against
/// each opponent (each rung).
#[derive(Clone, Copy, Debug)]
pub struct EvalPoint {
    pub step: u64,
    pub seed: u64,
    pub games: usize,
}

/// The periodic evaluation of `koma train`: opponents and settings, fixed for the run.
pub struct TrainingEval {
    variant: Variant,
    opponents: Vec<TrainingOpponent>,
    ladder: LadderPlan,
    /// Without openings when they are drawn for each evaluation (`random_plies`).
    settings: MatchSettings,
    random_plies: u32,
    /// The last evaluation's ladder rating: where the next staircase starts.
    last_rating: Mutex<Option<f64>>,
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
        std::fs::create_dir_all(workdir)
            .map_err(|source| EvalSetupError::Workdir { path: workdir.to_path_buf(), source })?;
        let (opponents, mut warnings) = resolve_opponents(ecfg, &ladder, variant, workdir)?;
        let wants_ladder = opponents.iter().any(|o| matches!(o.kind, OpponentKind::Ladder));
        let (ladder, missing) =
            if wants_ladder { LadderPlan::new(ecfg, &ladder, variant, workdir)? } else { (LadderPlan::none(), None) };
        warnings.extend(missing);
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
        let random_plies = ecfg.random_plies;
        let last_rating = Mutex::new(None);
        Ok((TrainingEval { variant, opponents, ladder, settings, random_plies, last_rating }, warnings))
    }

    /// Whether an opponent is the previous checkpoint.
    pub fn wants_previous(&self) -> bool {
        self.opponents.iter().any(|o| matches!(o.kind, OpponentKind::Previous))
    }

    /// Plays every opponent (`previous` only when given), showing a progress bar per
    /// match when `show`. A set `stop` (a signal) ends the evaluation within a move; the
    /// report then says `stopped` and holds no measurement.
    pub fn run(
        &self,
        ours: &KomaNetwork,
        previous: Option<&KomaNetwork>,
        point: EvalPoint,
        stop: Option<Arc<AtomicBool>>,
        show: bool,
    ) -> EvalReport {
        let round = Round { settings: self.settings_for(point, stop), step: point.step, show };
        let mut report = EvalReport {
            step: point.step,
            simulations: round.settings.simulations,
            results: Vec::new(),
            ladder: None,
            notes: Vec::new(),
            stopped: false,
        };
        for o in &self.opponents {
            let play = |opponent: &Opponent| self.play(ours, &round, opponent, &o.name, o.ladder_elo);
            let played = match (&o.kind, previous) {
                (OpponentKind::Player(spec), _) => play(&Opponent::Player(*spec.clone())).map(|r| vec![r]),
                (OpponentKind::Previous, Some(net)) => play(&Opponent::Network(net.clone())).map(|r| vec![r]),
                (OpponentKind::Previous, None) => continue,
                (OpponentKind::Ladder, _) => self.climb(ours, &round),
            };
            let Some(mut played) = played else {
                report.stopped = true;
                return report;
            };
            report.results.append(&mut played);
        }
        self.place(&mut report);
        report
    }

    /// The match settings of one evaluation: its seed, games, openings and stop flag.
    fn settings_for(&self, point: EvalPoint, stop: Option<Arc<AtomicBool>>) -> MatchSettings {
        let mut settings = MatchSettings { seed: point.seed, games: point.games, stop, ..self.settings.clone() };
        if settings.openings.is_empty() {
            let pairs = settings.games.div_ceil(2);
            settings.openings = random_openings(self.variant, pairs, self.random_plies, point.seed);
        }
        settings
    }

    /// One match; `None` when it was stopped (a partial match is no measurement).
    fn play(
        &self,
        ours: &KomaNetwork,
        round: &Round,
        opponent: &Opponent,
        name: &str,
        ladder_elo: Option<f64>,
    ) -> Option<OpponentResult> {
        let started = Instant::now();
        let settings = &round.settings;
        let label = format!("eval @{} vs {name}", round.step);
        let bar = progress::Reporter::shown_if(round.show, &label, Some(settings.games as u64), "games");
        let MatchOutcome { pair: outcome, batches } =
            play_match_observed(self.variant, ours, opponent, settings, &mut |r| {
                bar.set_message(format!("+{} ={} -{}", r.wdl.wins, r.wdl.draws, r.wdl.losses));
                bar.set_position(r.wdl.games() as u64);
            });
        bar.finish();
        if settings.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
            return None;
        }
        Some(OpponentResult {
            name: name.to_string(),
            ladder: ladder_elo.map(|e| Placement::against(e, &outcome.wdl)),
            outcome,
            mean_batch: batches.mean_batch(),
            seconds: started.elapsed().as_secs_f64(),
            opponent_ladder_elo: ladder_elo,
        })
    }

    /// The `ladder` opponent: the rungs of the staircase, from the last rating (or
    /// `eval.ladder_start`); `None` when stopped. The first rung above the estimate and
    /// the one below it are played at once, in two threads: most staircases need both, and
    /// on the portable backend (the evaluation's on the CPU) every game's search evaluates
    /// in its own thread, so the two matches share the cores.
    fn climb(&self, ours: &KomaNetwork, round: &Round) -> Option<Vec<OpponentResult>> {
        let plan = &self.ladder;
        let elos: Vec<f64> = plan.rungs.iter().map(|r| r.elo).collect();
        let estimate = self.last_rating.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or(plan.start);
        if elos.is_empty() {
            return Some(Vec::new());
        }
        let first = first_rung(&elos, estimate);
        let below = first.checked_sub(1).filter(|_| plan.max_rungs >= 2);
        let play_rung = |i: usize| {
            let rung = &plan.rungs[i];
            self.play(ours, round, &Opponent::Player(rung.spec.clone()), &rung.spec.name, Some(rung.elo))
        };
        let (first_result, below_result) = std::thread::scope(|s| {
            let below_match = below.map(|i| s.spawn(move || play_rung(i)));
            (play_rung(first), below_match.map(|m| m.join().expect("an evaluation match panicked")))
        });
        let (mut played, mut results) = (Vec::new(), Vec::new());
        for (i, r) in std::iter::once((first, first_result)).chain(below.zip(below_result)) {
            let r = r?;
            played.push((i, r.outcome.wdl));
            results.push(r);
        }
        let mut next = next_rung(&played, elos.len(), plan.max_rungs);
        while let Some(i) = next {
            let r = play_rung(i)?;
            played.push((i, r.outcome.wdl));
            results.push(r);
            next = next_rung(&played, elos.len(), plan.max_rungs);
        }
        Some(results)
    }

    /// The placement over every rung played, remembered for the next staircase, and a
    /// note when the network beat the highest rung it can play outright.
    fn place(&self, report: &mut EvalReport) {
        let rungs: Vec<(f64, Wdl)> =
            report.results.iter().filter_map(|r| r.opponent_ladder_elo.map(|e| (e, r.outcome.wdl))).collect();
        report.ladder = place(&rungs).zip(finite_rating(&rungs));
        if let Some((_, rating)) = report.ladder {
            *self.last_rating.lock().unwrap_or_else(|e| e.into_inner()) = Some(rating);
        }
        report.notes.extend(self.ladder.ceiling_note(report));
    }
}

/// The opponents of `ecfg.opponents` and the warnings of those left out.
fn resolve_opponents(
    ecfg: &EvalConfig,
    ladder: &Ladder,
    variant: Variant,
    workdir: &Path,
) -> Result<(Vec<TrainingOpponent>, Vec<String>), EvalSetupError> {
    let mut opponents = Vec::new();
    let mut warnings = Vec::new();
    for text in &ecfg.opponents {
        let kind = match text.as_str() {
            PREVIOUS => OpponentKind::Previous,
            LADDER => OpponentKind::Ladder,
            _ => {
                let (spec, ladder_elo) = parse_player(text, ladder)?;
                // The ladder's ratings hold in its own variant only.
                let ladder_elo = ladder_elo.filter(|_| ladder.variant == variant);
                if let Err(why) = spec.create(variant, 1, workdir, ENGINE_TIMEOUT) {
                    warnings.push(format!(
                        "evaluation opponent {} left out: {why} (scripts/install-engines.sh)",
                        spec.name
                    ));
                    continue;
                }
                opponents.push(TrainingOpponent {
                    name: spec.name.clone(),
                    kind: OpponentKind::Player(Box::new(spec)),
                    ladder_elo,
                });
                continue;
            }
        };
        opponents.push(TrainingOpponent { name: text.clone(), kind, ladder_elo: None });
    }
    Ok((opponents, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensorboard::TensorBoardLog;

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
        model::set_torch_threads(1, model::CpuShare::Whole);
        let cfg = model::NetConfig { attack_planes, ..model::NetConfig::tiny() };
        KomaNetwork::from_network(model::fresh_network(Variant::Shogi, &cfg, 1).unwrap())
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

    /// A ladder of two built-in rungs and one whose engine is not installed.
    const LADDER: &str = r#"variant = "shogi"
tc = "byoyomi=500"
[[rung]]
name = "random"
spec = "random"
elo = 0
[[rung]]
name = "greedy"
spec = "greedy"
elo = 2168
[[rung]]
name = "absent"
spec = "usi:/nonexistent/engine"
elo = 4000
"#;

    /// The report of an evaluation at step 500 with these results against rungs.
    fn placed(plan: &TrainingEval, results: &[(&str, f64, Wdl)]) -> EvalReport {
        let results = results
            .iter()
            .map(|&(name, elo, wdl)| OpponentResult {
                name: name.into(),
                outcome: arena::schedule::PairOutcome { wdl, ..Default::default() },
                mean_batch: 1.0,
                seconds: 1.0,
                opponent_ladder_elo: Some(elo),
                ladder: Some(Placement::against(elo, &wdl)),
            })
            .collect();
        let mut report = EvalReport { step: 500, simulations: 8, results, ladder: None, notes: vec![], stopped: false };
        plan.place(&mut report);
        report
    }

    /// A rung whose engine does not start is left out with the install hint; beating the
    /// top rung that is left outright says so (no upper bound), and the next staircase
    /// starts from the last rating.
    #[test]
    fn the_ladder_opponent_skips_missing_engines_and_names_its_ceiling() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ladder.toml");
        std::fs::write(&path, LADDER).unwrap();
        let ecfg = EvalConfig {
            opponents: vec!["ladder".into()],
            ladder: crate::config::EvalLadder::File(path),
            ..EvalConfig::default()
        };
        let (plan, warnings) =
            TrainingEval::new(&ecfg, &SearchConfig::default(), Variant::Shogi, &dir.path().join("engines")).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("absent") && warnings[0].contains("scripts/install-engines.sh"), "{warnings:?}");
        assert_eq!(plan.ladder.rungs.iter().map(|r| r.spec.name.as_str()).collect::<Vec<_>>(), ["random", "greedy"]);
        assert_eq!(plan.ladder.start, 0.0, "no ladder_start: the lowest rung");

        let swept = placed(&plan, &[("random", 0.0, Wdl::new(4, 0, 0)), ("greedy", 2168.0, Wdl::new(4, 0, 0))]);
        let note = swept.notes.join(" ");
        assert!(note.contains("beat greedy") && note.contains("no upper bound"), "{note}");
        assert!(note.contains("scripts/install-engines.sh"), "{note}");
        assert!(swept.line().contains("ladder Elo at least"), "{}", swept.line());
        let rating = plan.last_rating.lock().unwrap().unwrap();
        assert!(rating > 2168.0, "the next staircase starts above greedy: {rating}");

        let bracketed = placed(&plan, &[("greedy", 2168.0, Wdl::new(2, 0, 2))]);
        assert!(bracketed.notes.is_empty(), "{:?}", bracketed.notes);
        let (p, _) = bracketed.ladder.unwrap();
        assert!(p.low.is_finite() && p.high.is_finite(), "{p:?}");
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
        let point = |step, seed| EvalPoint { step, seed, games: 4 };
        let report = plan.run(&torch(true), Some(&torch(false)), point(100, 5), None, false);
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
        assert_eq!(plan.run(&torch(true), None, point(200, 6), None, false).results.len(), 2);
        // A set stop flag ends the evaluation at once, with no measurement.
        let stop = Arc::new(AtomicBool::new(true));
        let stopped = plan.run(&torch(true), None, point(300, 7), Some(stop), false);
        assert!(stopped.stopped && stopped.results.is_empty());
    }
}
