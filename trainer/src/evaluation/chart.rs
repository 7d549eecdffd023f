//! The training run's strength over its steps: every evaluation in `eval.jsonl` against
//! the fixed baselines (random, greedy) placed on the measured baseline ladder
//! (`arena::ladder`), drawn as `elo.png` and `elo.svg` in the run folder. `koma train`
//! redraws them after each evaluation; `koma plot RUN` draws them from the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arena::ladder::{finite_rating, place, rung_rating, Ladder, Placement};
use arena::Wdl;
use charts::{write_chart, Chart, ChartError, Point, Series};
use dataio::eval_log::EvalLogError;
pub use dataio::EvalRecord;

#[derive(Debug, thiserror::Error)]
pub enum RunPlotError {
    /// `eval.jsonl` cannot be read.
    #[error(transparent)]
    Log(#[from] EvalLogError),
    #[error("{path}: no evaluation against a ladder player ({players}) to plot")]
    NoLadderGames { path: PathBuf, players: String },
    #[error(transparent)]
    Plot(#[from] ChartError),
}

/// The records of an `eval.jsonl` file, in file order ([`dataio::eval_log::read_eval_log`]).
pub fn read_eval_log(path: &Path) -> Result<Vec<EvalRecord>, RunPlotError> {
    Ok(dataio::eval_log::read_eval_log(path)?)
}

/// Each evaluated step's results against the ladder players met then: (rating of the
/// player, its name, the games).
type LadderResults<'a> = BTreeMap<u64, Vec<(f64, &'a str, Wdl)>>;

fn ladder_results(records: &[EvalRecord]) -> LadderResults<'_> {
    let mut by_step: LadderResults = BTreeMap::new();
    for r in records {
        let Some(rating) = r.opponent_ladder_elo.or_else(|| rung_rating(&r.opponent)) else { continue };
        let wdl = Wdl { wins: r.wins, draws: r.draws, losses: r.losses };
        by_step.entry(r.step).or_default().push((rating, &r.opponent, wdl));
    }
    by_step
}

fn ratings_and_games(results: &[(f64, &str, Wdl)]) -> Vec<(f64, Wdl)> {
    results.iter().map(|&(rating, _, wdl)| (rating, wdl)).collect()
}

/// The chart of `records`: at each evaluated step, the rating that best explains the
/// games against every ladder player met then, with its 95% interval; the ladder
/// players met as horizontal lines. Other opponents (`previous`) are left out.
pub fn ladder_chart(records: &[EvalRecord], title: &str) -> Chart {
    let by_step = ladder_results(records);
    let mut met: Vec<(String, f64)> = Vec::new();
    for &(rating, name, _) in by_step.values().flatten() {
        if !met.iter().any(|(n, _)| n == name) {
            met.push((name.to_string(), rating));
        }
    }
    let points = by_step
        .iter()
        .filter_map(|(&step, results)| {
            // The maximum-likelihood rating, finite also after a sweep (for the chart);
            // its interval where both bounds are finite.
            let results = ratings_and_games(results);
            let p = place(&results)?;
            let error = (p.low.is_finite() && p.high.is_finite()).then(|| (p.high - p.low) / 2.0);
            Some(Point { x: step as f64, y: finite_rating(&results)?, error })
        })
        .collect();
    met.sort_by(|a, b| a.1.total_cmp(&b.1));
    Chart {
        title: title.to_string(),
        x_label: "training step".into(),
        y_label: "Elo on the baseline ladder (random = 0)".into(),
        series: vec![Series { name: series_name(records), points }],
        levels: met,
    }
}

/// The legend: the network's simulations a move when every ladder game had the same.
fn series_name(records: &[EvalRecord]) -> String {
    let rung = |r: &&EvalRecord| r.opponent_ladder_elo.or_else(|| rung_rating(&r.opponent)).is_some();
    let mut sims = records.iter().filter(rung).map(|r| r.simulations);
    match sims.next() {
        Some(n) if n > 0 && sims.all(|m| m == n) => format!("network at {n} simulations a move (95% interval)"),
        _ => "network (95% interval)".into(),
    }
}

/// The rating at each evaluated step of `<run>/eval.jsonl` (`path`), as the chart places
/// it, oldest first; none when the file is missing or unreadable.
pub fn ladder_by_step(path: &Path) -> Vec<(u64, Placement)> {
    let records = read_eval_log(path).unwrap_or_default();
    let placed =
        ladder_results(&records).into_iter().filter_map(|(step, r)| Some((step, place(&ratings_and_games(&r))?)));
    placed.collect()
}

/// A rating for the console: `+2900 [+2700, +3100]`, or its one bound after a sweep of
/// every game (`at least +4500`, above every rung played; `at most`, below).
pub fn placement_text(p: &Placement) -> String {
    if p.high.is_infinite() && p.low.is_finite() {
        format!("at least {:+.0} (won every game)", p.low)
    } else if p.low.is_infinite() && p.high.is_finite() {
        format!("at most {:+.0} (lost every game)", p.high)
    } else {
        format!("{:+.0} [{:+.0}, {:+.0}]", p.elo, p.low, p.high)
    }
}

/// The same ratings as a text table, a line per evaluated step: the step, the minutes
/// into the run when its evaluation ended, the rating and its 95% interval (`koma
/// ladder place`'s), and the games against each ladder player (W-D-L).
pub fn ladder_table(records: &[EvalRecord]) -> String {
    let mut out = String::from("step\tminutes (eval end)\tladder Elo\t95% interval\tgames\n");
    for (step, results) in ladder_results(records) {
        let Some(p) = place(&ratings_and_games(&results)) else { continue };
        let minutes = records.iter().find(|r| r.step == step).map_or(0.0, |r| r.elapsed_seconds / 60.0);
        let games: Vec<String> =
            results.iter().map(|(_, name, w)| format!("{name} {}-{}-{}", w.wins, w.draws, w.losses)).collect();
        out += &format!("{step}\t{minutes:.1}\t{:+.0}\t[{:+.0}, {:+.0}]\t{}\n", p.elo, p.low, p.high, games.join(", "));
    }
    out
}

/// Draws `<run>/elo.png` and `<run>/elo.svg` from `<run>/eval.jsonl`; returns the files.
pub fn plot_run(run_dir: &Path) -> Result<Vec<PathBuf>, RunPlotError> {
    let records = read_eval_log(&run_dir.join("eval.jsonl"))?;
    plot_records(run_dir, &records)
}

/// [`plot_run`] from the records of `<run>/eval.jsonl` already read.
pub fn plot_records(run_dir: &Path, records: &[EvalRecord]) -> Result<Vec<PathBuf>, RunPlotError> {
    let log = run_dir.join("eval.jsonl");
    let name = run_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let chart = ladder_chart(records, &format!("{name}: rating on the baseline ladder"));
    if chart.series.iter().all(|s| s.points.is_empty()) {
        let ladder = Ladder::shipped();
        let players: Vec<&str> = ladder.rungs.iter().map(|r| r.name.as_str()).collect();
        return Err(RunPlotError::NoLadderGames { path: log, players: players.join(", ") });
    }
    let files = vec![run_dir.join("elo.png"), run_dir.join("elo.svg")];
    for f in &files {
        write_chart(&chart, f)?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"draws":15,"elapsed_seconds":0.0,"elo":254.7,"losses":0,"mean_length":195.9,"opponent":"random","score":0.81,"step":0,"wins":25}
{"draws":0,"elapsed_seconds":0.0,"elo":-800.0,"losses":40,"mean_length":80.0,"opponent":"greedy","score":0.0,"step":0,"wins":0}
{"draws":2,"elapsed_seconds":60.0,"elo":600.0,"losses":0,"mean_length":120.0,"opponent":"random","score":0.97,"step":500,"wins":38}
{"draws":3,"elapsed_seconds":60.0,"elo":-300.0,"losses":33,"mean_length":90.0,"opponent":"greedy","score":0.13,"step":500,"wins":4}
{"draws":20,"elapsed_seconds":60.0,"elo":0.0,"losses":10,"mean_length":90.0,"opponent":"previous","score":0.5,"step":500,"wins":10}
"#;

    /// `LOG` written to a file and read back.
    fn logged_records() -> Vec<EvalRecord> {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("eval.jsonl");
        std::fs::write(&log, LOG).unwrap();
        read_eval_log(&log).unwrap()
    }

    #[test]
    fn each_step_is_placed_between_the_rungs_it_met() {
        let records = logged_records();
        assert_eq!(records.len(), 5);
        let chart = ladder_chart(&records, "t");
        let points = &chart.series[0].points;
        assert_eq!(points.iter().map(|p| p.x).collect::<Vec<_>>(), vec![0.0, 500.0]);
        let greedy = rung_rating("greedy").unwrap();
        assert!(points.iter().all(|p| p.y > 0.0 && p.y < greedy), "{points:?}");
        assert!(points[1].y > points[0].y, "the later network scores better against both: {points:?}");
        assert_eq!(chart.levels, vec![("random".to_string(), 0.0), ("greedy".to_string(), greedy)]);
    }

    #[test]
    fn the_table_has_a_line_per_step_with_the_charts_games() {
        let table = ladder_table(&logged_records());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[1].starts_with("0\t0.0\t") && lines[1].ends_with("random 25-15-0, greedy 0-0-40"), "{table}");
        assert!(lines[2].starts_with("500\t1.0\t") && lines[2].ends_with("random 38-2-0, greedy 4-3-33"), "{table}");
        assert!(!table.contains("previous"), "{table}");
    }

    #[test]
    fn plot_run_writes_png_and_svg_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("eval.jsonl"), LOG).unwrap();
        let files = plot_run(dir.path()).unwrap();
        assert!(files.iter().all(|f| f.exists()), "{files:?}");
        std::fs::write(dir.path().join("eval.jsonl"), LOG.lines().last().unwrap()).unwrap();
        assert!(matches!(plot_run(dir.path()), Err(RunPlotError::NoLadderGames { .. })));
        std::fs::write(dir.path().join("eval.jsonl"), "{\"step\": 1}\n").unwrap();
        let err = plot_run(dir.path()).unwrap_err();
        assert!(err.to_string().contains("eval.jsonl:1:"), "{err}");
    }
}
