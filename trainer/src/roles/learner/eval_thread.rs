//! The thread of the learner's periodic evaluation, off its critical path: the games run
//! in a thread of their own on the saved checkpoint, through the arena's match harness
//! ([`TrainingEval`]), while training goes on. Abandoning it sets the match's stop flag,
//! which ends the games within a move.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use arena::koma_player::KomaNetwork;
use model::tch::Device;
use rules::Variant;

use crate::error::TrainError;
use crate::evaluation::{EvalPoint, EvalReport, TrainingEval};

/// One evaluation to run.
pub struct EvalJob {
    pub plan: Arc<TrainingEval>,
    pub variant: Variant,
    pub step: u64,
    /// Local stem of the checkpoint to evaluate, and its run-relative name.
    pub ours: PathBuf,
    pub checkpoint: String,
    /// Local stem of the `previous` baseline, if there is one.
    pub previous: Option<PathBuf>,
    pub seed: u64,
    /// Games against each opponent.
    pub games: usize,
    pub device: Device,
    /// Progress bars of the matches.
    pub show: bool,
}

/// What an evaluation found.
pub struct EvalOutcome {
    pub checkpoint: String,
    pub report: EvalReport,
    pub notes: Vec<String>,
}

fn run_job(job: EvalJob, stop: Arc<AtomicBool>) -> Result<EvalOutcome, TrainError> {
    let ours = KomaNetwork::load_on(&job.ours, job.device, job.variant)
        .map_err(|e| TrainError::EvalNetwork { path: job.ours.clone(), source: Box::new(e) })?;
    let mut notes = Vec::new();
    let previous = match &job.previous {
        Some(stem) if job.plan.wants_previous() => match KomaNetwork::load_on(stem, job.device, job.variant) {
            Ok(net) => Some(net),
            Err(e) => {
                notes.push(format!("previous checkpoint {}: {e}", stem.display()));
                None
            }
        },
        _ => None,
    };
    let point = EvalPoint { step: job.step, seed: job.seed, games: job.games };
    let report = job.plan.run(&ours, previous.as_ref(), point, Some(stop), job.show);
    Ok(EvalOutcome { checkpoint: job.checkpoint, report, notes })
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
        Some(t.join().unwrap_or_else(|_| Err(TrainError::EvalPanicked)))
    }

    /// Abandons a running evaluation: its games end within a move, and a stopped match
    /// is no measurement, so nothing of it is recorded.
    pub fn abandon(&mut self) {
        if let Some((t, stop)) = self.running.take() {
            stop.store(true, Ordering::SeqCst);
            let _ = t.join();
        }
    }
}
