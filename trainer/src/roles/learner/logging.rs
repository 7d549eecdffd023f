//! What the learner reports: TensorBoard scalars (its steps, self-play in its process,
//! the workers' reports), the status line, and the summary at the end of a run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arena::{Placement, Wdl};
use selfplay::Progress;

use crate::evaluation::chart::placement_text;
use crate::learning::net_trainer::StepStats;
use crate::roles::display::Display;
use crate::roles::files::RunFiles;
use crate::roles::state::RunState;
use crate::roles::worker::WorkerReport;
use crate::tensorboard::{tags, TensorBoardLog};
use dataio::run_layout as layout;

/// TensorBoard and the running means and rates between two writes.
pub(super) struct TrainLog {
    pub tb: TensorBoardLog,
    acc: StepStats,
    acc_n: u64,
    /// Log intervals whose every step was skipped (f16 overflow).
    skipped: u64,
    /// The loss of the last statistics read; `None` before the first.
    last_loss: Option<f64>,
    /// Games that the workers' reports (`workers/*.json`) count, once one was read.
    worker_games: Option<u64>,
    train_seconds: f64,
    last_log: (Instant, u64),
    last_workers: Instant,
}

/// What a scalar write reads besides the learner's own statistics.
pub(super) struct Counters<'a> {
    pub step: u64,
    pub state: &'a RunState,
    pub loader_wait_seconds: f64,
    /// Self-play in the learner's process (the first worker), if any.
    pub selfplay: Option<Progress>,
    /// The replay window's size (samples it may hold).
    pub replay_window: usize,
    /// The material prior's share of the value target at this step.
    pub material_mix: f64,
}

impl TrainLog {
    pub fn new(tb: TensorBoardLog, step: u64) -> TrainLog {
        let now = Instant::now();
        TrainLog {
            tb,
            acc: StepStats::default(),
            acc_n: 0,
            skipped: 0,
            last_loss: None,
            worker_games: None,
            train_seconds: 0.0,
            last_log: (now, step),
            last_workers: now - Duration::from_secs(3600),
        }
    }

    /// Time spent in optimiser steps (for the loader's wait fraction).
    pub fn add_train_seconds(&mut self, seconds: f64) {
        self.train_seconds += seconds;
    }

    /// The means of the steps since the last read, as the trainer returned them.
    pub fn add_stats(&mut self, stats: Option<StepStats>) {
        match stats {
            Some(st) if st.skipped => self.skipped += 1,
            Some(st) => {
                self.acc.add(&st);
                self.acc_n += 1;
                self.last_loss = Some(st.loss);
            }
            None => {}
        }
    }

    /// The share of the learner's time spent waiting for minibatches.
    pub fn loader_wait_fraction(&self, wait_seconds: f64) -> f64 {
        wait_seconds / (wait_seconds + self.train_seconds).max(1e-9)
    }

    /// The status line's text after the step count. `local_games` is `None` for a
    /// learner without self-play in its process (nor in earlier sessions).
    pub fn status(
        &self,
        state: &RunState,
        local_games: Option<u64>,
        in_window: usize,
        elapsed: f64,
        what: &str,
    ) -> String {
        let loss = self.last_loss.map_or("-".to_string(), |l| format!("{l:.3}"));
        format!(
            "{}, {} samples ({in_window} in window) | {} trained | loss {loss} | {:.1} min | {what}",
            games_text(local_games, self.worker_games),
            state.samples_generated,
            state.samples_trained,
            elapsed / 60.0
        )
    }

    /// Games the workers report, once a report was read.
    pub fn worker_games(&self) -> Option<u64> {
        self.worker_games
    }

    /// Reads the workers' reports now (for the summary at the end).
    pub fn read_worker_games(&mut self, files: &RunFiles) {
        let reports = worker_reports(files);
        if !reports.is_empty() {
            self.worker_games = Some(reports.iter().map(|r| r.games).sum());
        }
    }

    /// Reports, once, a write error that ended the TensorBoard file (training goes on).
    pub fn report_tb_error(&mut self, display: &Display) {
        if let Some(e) = self.tb.take_error() {
            display.warn(&format!("koma: warning: {e}"));
        }
    }

    /// The learner's, self-play's and the workers' scalars.
    pub fn scalars(&mut self, c: &Counters, files: &RunFiles, display: &Display) {
        let step = c.step;
        if self.acc_n > 0 {
            let m = self.acc.scaled(1.0 / self.acc_n as f64);
            self.tb.step_stats(&m, step);
        }
        self.tb.scalar(tags::LOADER_WAIT, self.loader_wait_fraction(c.loader_wait_seconds), step);
        let dt = self.last_log.0.elapsed().as_secs_f64();
        self.tb.scalar(tags::STEPS_PER_SEC, (step - self.last_log.1) as f64 / dt.max(1e-9), step);
        self.last_log = (Instant::now(), step);
        if let Some(p) = &c.selfplay {
            self.selfplay_scalars(p, step);
        }
        let generated = c.state.samples_generated;
        self.tb.scalar(tags::SAMPLES_GENERATED, generated as f64, step);
        self.tb.scalar(tags::TRAIN_RATIO, c.state.samples_trained as f64 / generated.max(1) as f64, step);
        self.tb.scalar(tags::SKIPPED_CHUNKS, c.state.rejected_chunks.len() as f64, step);
        self.tb.scalar(tags::REPLAY_WINDOW, c.replay_window as f64, step);
        self.tb.scalar(tags::MATERIAL_MIX, c.material_mix, step);
        self.workers(c.state, step, files, display);
        self.tb.flush();
        self.acc = StepStats::default();
        self.acc_n = 0;
    }

    fn selfplay_scalars(&mut self, p: &Progress, step: u64) {
        let hours = p.elapsed.as_secs_f64() / 3600.0;
        if hours > 0.0 {
            self.tb.scalar(tags::GAMES_PER_HOUR, p.games_done as f64 / hours, step);
            self.tb.scalar(tags::EVALS_PER_SEC, p.evals_per_sec(), step);
        }
        if p.games_done > 0 {
            self.tb.scalar(tags::MEAN_GAME_LENGTH, p.mean_game_length(), step);
        }
        for (tag, n) in
            [(tags::DRAW_FRACTION, p.drawn), (tags::CUT_FRACTION, p.cut), (tags::ADJUDICATED_FRACTION, p.adjudicated)]
        {
            if let Some(share) = p.share_of_games(n) {
                self.tb.scalar(tag, share, step);
            }
        }
        if let Some(r) = p.false_resign_rate() {
            self.tb.scalar(tags::FALSE_RESIGN_RATE, r, step);
        }
        self.tb.scalar(tags::RESIGN_THRESHOLD, p.resign_threshold as f64, step);
    }

    /// Samples per worker, and the throughput that each worker reports in `workers/`
    /// (read at most every 30 s).
    fn workers(&mut self, state: &RunState, step: u64, files: &RunFiles, display: &Display) {
        for (id, n) in &state.samples_by_worker {
            self.tb.scalar(&format!("{}{id}", tags::SAMPLES_FROM), *n as f64, step);
        }
        if self.last_workers.elapsed() < Duration::from_secs(30) {
            return;
        }
        self.last_workers = Instant::now();
        let reports = worker_reports(files);
        for r in &reports {
            self.tb.scalar(&format!("workers/{}/games_per_hour", r.worker_id), r.games_per_hour, step);
            self.tb.scalar(&format!("workers/{}/evaluations_per_second", r.worker_id), r.evaluations_per_second, step);
        }
        if !reports.is_empty() {
            self.worker_games = Some(reports.iter().map(|r| r.games).sum());
        }
        self.push(files, display);
    }

    /// Uploads the TensorBoard files of a remote run.
    pub fn push(&self, files: &RunFiles, display: &Display) {
        if files.is_local() {
            return;
        }
        let Ok(rd) = std::fs::read_dir(self.tb.dir()) else { return };
        for e in rd.filter_map(|e| e.ok()) {
            let key = format!("{}/{}", layout::TB, e.file_name().to_string_lossy());
            if let Err(err) = files.push(&key) {
                display.warn(&format!("koma learner: TensorBoard upload: {err}"));
            }
        }
    }

    /// Writes out the scalars and uploads them; notes the intervals lost to f16 overflow.
    pub fn close(&mut self, files: &RunFiles, display: &Display) {
        self.tb.flush();
        self.push(files, display);
        if self.skipped > 0 {
            display.println(&format!(
                "koma train: every step of {} log intervals skipped (f16 gradient overflow)",
                self.skipped
            ));
        }
    }
}

/// The workers' reports (`workers/*.json`) that can be read; unreadable ones are skipped
/// (they are advisory).
fn worker_reports(files: &RunFiles) -> Vec<WorkerReport> {
    let keys = files.store.list(layout::WORKERS).unwrap_or_default();
    keys.iter()
        .filter_map(|e| files.store.get(&e.key).ok().flatten())
        .filter_map(|bytes| serde_json::from_slice::<WorkerReport>(&bytes).ok())
        .collect()
}

/// The games behind a run's samples: self-play's in the learner's process (`local`,
/// `None` when it has none), and the workers' as their reports count them (`None` before
/// a report was read). Chunks carry no game count, so a learner fed by workers that
/// have not reported yet says `games n/a`.
pub fn games_text(local: Option<u64>, workers: Option<u64>) -> String {
    match (local, workers) {
        (None, None) => "games n/a".into(),
        (Some(l), None) => format!("{l} games"),
        (None, Some(w)) => format!("{w} games by workers"),
        (Some(l), Some(w)) => format!("{} games ({w} by workers)", l + w),
    }
}

/// The end of a run.
#[derive(Clone, Debug, Default)]
pub struct TrainSummary {
    pub run_dir: PathBuf,
    pub stop_reason: String,
    pub step: u64,
    /// Self-play games of the learner's process, all sessions (`None`: it had none).
    pub games: Option<u64>,
    /// Games the workers' reports count (`None`: no report read).
    pub worker_games: Option<u64>,
    pub samples_generated: u64,
    pub samples_trained: u64,
    pub elapsed_seconds: f64,
    pub checkpoint: String,
    /// The last evaluation's results: (opponent, step, result).
    pub last_eval: Vec<(String, u64, Wdl)>,
    /// The rating on the ladder at each evaluated step (`eval.jsonl`), oldest first.
    pub ladder: Vec<(u64, Placement)>,
    pub loader_wait_fraction: f64,
}

impl std::fmt::Display for TrainSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "koma train: {} after {:.1} min: step {}, {}, {} samples generated, {} trained, loader wait {:.1}%",
            self.stop_reason,
            self.elapsed_seconds / 60.0,
            self.step,
            games_text(self.games, self.worker_games),
            self.samples_generated,
            self.samples_trained,
            100.0 * self.loader_wait_fraction
        )?;
        for (o, s, r) in &self.last_eval {
            write!(f, "; vs {o} @{s}: {:.2} (+{} ={} -{})", r.score(), r.wins, r.draws, r.losses)?;
        }
        if !self.ladder.is_empty() {
            write!(f, "; ladder Elo by step: {}", ladder_text(&self.ladder))?;
        }
        write!(f, "; checkpoint {}", self.run_dir.join(&self.checkpoint).display())
    }
}

/// Most ratings the summary names: the first and the newest.
const SUMMARY_RATINGS: usize = 6;

/// `step rating, ...` of the first rating and the newest ones (`...` between).
fn ladder_text(ladder: &[(u64, Placement)]) -> String {
    let text = |(step, p): &(u64, Placement)| format!("{step} {}", placement_text(p));
    if ladder.len() <= SUMMARY_RATINGS {
        return ladder.iter().map(text).collect::<Vec<_>>().join(", ");
    }
    let newest = ladder[ladder.len() - (SUMMARY_RATINGS - 1)..].iter().map(text);
    std::iter::once(text(&ladder[0]))
        .chain(std::iter::once("...".to_string()))
        .chain(newest)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary names the rating at each evaluated step, a sweep by its bound, and of
    /// many evaluations the first and the newest.
    #[test]
    fn the_summary_names_the_ladder_rating_by_step() {
        let p = |elo: f64, low: f64, high: f64| Placement { elo, low, high, games: 8 };
        let ladder = vec![(1200, p(2900.0, 2700.0, 3100.0)), (4800, p(f64::INFINITY, 4400.0, f64::INFINITY))];
        let summary = TrainSummary { ladder, ..Default::default() }.to_string();
        assert!(
            summary.contains("; ladder Elo by step: 1200 +2900 [+2700, +3100], 4800 at least +4400 (won every game);"),
            "{summary}"
        );
        let many: Vec<(u64, Placement)> = (1..=9).map(|k| (k * 100, p(k as f64, 0.0, 10.0))).collect();
        let text = ladder_text(&many);
        assert!(text.starts_with("100 +1 [+0, +10], ..., 500 +5") && text.ends_with("900 +9 [+0, +10]"), "{text}");
    }

    /// Before the first statistics the status says `loss -` (not `NaN`, which reads as a
    /// diverged run); a learner fed by workers says `games n/a` until a report counts them.
    #[test]
    fn the_status_line_before_the_first_statistics_and_without_local_games() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = TrainLog::new(TensorBoardLog::new(dir.path()).unwrap(), 0);
        let state = RunState { samples_generated: 40, ..RunState::fresh("shogi", 1, 2) };
        let line = log.status(&state, None, 40, 60.0, "training");
        assert!(line.starts_with("games n/a, 40 samples") && line.contains("| loss - |"), "{line}");
        log.add_stats(Some(StepStats { loss: 2.5, ..Default::default() }));
        log.worker_games = Some(7);
        let line = log.status(&state, None, 40, 60.0, "training");
        assert!(line.starts_with("7 games by workers, ") && line.contains("| loss 2.500 |"), "{line}");
        assert!(log.status(&state, Some(3), 40, 60.0, "x").starts_with("10 games (7 by workers), "));
        assert_eq!(games_text(Some(3), None), "3 games");
    }
}
