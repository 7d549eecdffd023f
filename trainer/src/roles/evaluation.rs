//! The learner's periodic evaluation, off its critical path: the games run in a thread
//! of their own on a copy of the checkpoint, while training goes on. Stopping makes the
//! network's forward passes fail, which ends the games at once.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use model::tch::Device;
use model::{EvalError, Evaluation, Evaluator, Expected, NetShape};
use rules::Variant;

use super::network::{evaluator_of, load_network};
use crate::eval::{play_match, MatchResult, MatchSettings, Opponent};
use crate::run::TrainError;

/// One evaluation to run.
pub struct EvalJob {
    pub variant: Variant,
    pub step: u64,
    /// Local stem of the checkpoint to evaluate, and its run-relative name.
    pub ours: PathBuf,
    pub checkpoint: String,
    /// Local stem of the `previous` baseline, if there is one.
    pub previous: Option<PathBuf>,
    pub opponents: Vec<String>,
    pub settings: MatchSettings,
    pub device: Device,
    pub expected: Expected,
}

/// What an evaluation found: (opponent, result, seconds) per opponent played.
pub struct EvalOutcome {
    pub step: u64,
    pub checkpoint: String,
    pub results: Vec<(String, MatchResult, f64)>,
    pub notes: Vec<String>,
}

/// Fails every forward pass once `stop` is set, so that a match ends at once.
struct Stoppable {
    inner: Arc<dyn Evaluator>,
    stop: Arc<AtomicBool>,
}

impl Evaluator for Stoppable {
    fn shape(&self) -> NetShape {
        self.inner.shape()
    }

    fn evaluate_into(&self, inputs: &[f32], batch: usize, out: &mut Evaluation) -> Result<(), EvalError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(EvalError::Torch("evaluation stopped".into()));
        }
        self.inner.evaluate_into(inputs, batch, out)
    }
}

/// Plays one evaluation match (the one call into the match code).
fn play_evaluation(
    variant: Variant,
    ours: &dyn Evaluator,
    opponent: Opponent,
    settings: &MatchSettings,
) -> MatchResult {
    play_match(variant, ours, opponent, settings)
}

fn run_job(job: EvalJob, stop: Arc<AtomicBool>) -> Result<EvalOutcome, TrainError> {
    let (net, _) = load_network(&job.ours, &job.expected, job.device)?;
    let ours = Stoppable { inner: evaluator_of(&net, job.device)?, stop: stop.clone() };
    let mut out = EvalOutcome { step: job.step, checkpoint: job.checkpoint.clone(), results: vec![], notes: vec![] };
    for name in &job.opponents {
        let opponent = match (name.as_str(), &job.previous) {
            ("previous", None) => continue,
            ("previous", Some(stem)) => match load_network(stem, &job.expected, job.device) {
                Ok((net, _)) => {
                    Opponent::Net(Arc::new(Stoppable { inner: evaluator_of(&net, job.device)?, stop: stop.clone() }))
                }
                Err(e) => {
                    out.notes.push(format!("previous checkpoint {}: {e}", stem.display()));
                    continue;
                }
            },
            (other, _) => Opponent::baseline(other).expect("validated opponent"),
        };
        let t = Instant::now();
        let r = play_evaluation(job.variant, &ours, opponent, &job.settings);
        if stop.load(Ordering::Relaxed) {
            break;
        }
        out.results.push((name.clone(), r, t.elapsed().as_secs_f64()));
    }
    Ok(out)
}

/// The evaluation thread and its stop flag.
type Running = (JoinHandle<Result<EvalOutcome, TrainError>>, Arc<AtomicBool>);

/// At most one evaluation at a time, in the background.
#[derive(Default)]
pub struct EvalRunner {
    running: Option<Running>,
}

impl EvalRunner {
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    pub fn start(&mut self, job: EvalJob) {
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let t = std::thread::Builder::new()
            .name("koma-eval".into())
            .spawn(move || run_job(job, s2))
            .expect("spawn the evaluation thread");
        self.running = Some((t, stop));
    }

    /// The finished evaluation, if one finished.
    pub fn poll(&mut self) -> Option<Result<EvalOutcome, TrainError>> {
        if !self.running.as_ref().is_some_and(|(t, _)| t.is_finished()) {
            return None;
        }
        let (t, _) = self.running.take()?;
        Some(t.join().unwrap_or_else(|_| Err(TrainError::Run("the evaluation thread panicked".into()))))
    }

    /// Abandons a running evaluation (its games end at their next forward pass).
    pub fn abandon(&mut self) {
        if let Some((t, stop)) = self.running.take() {
            stop.store(true, Ordering::SeqCst);
            let _ = t.join();
        }
    }
}
