//! `koma plot RUN`: the training run's rating on the baseline ladder over its steps,
//! drawn from `RUN/eval.jsonl` into `RUN/elo.png` and `RUN/elo.svg` (what `koma train`
//! redraws after each evaluation), and the same ratings as a table on standard output.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use trainer::evaluation::chart;

use crate::BadInput;

#[derive(Args)]
pub struct PlotArgs {
    /// The run: its folder, or its name under --runs-dir.
    run: PathBuf,
    /// Folder of the runs.
    #[arg(long, default_value = "runs")]
    runs_dir: PathBuf,
}

pub fn plot(args: PlotArgs) -> anyhow::Result<ExitCode> {
    let run_dir = if args.run.join("eval.jsonl").is_file() { args.run.clone() } else { args.runs_dir.join(&args.run) };
    if !run_dir.join("eval.jsonl").is_file() {
        return Err(BadInput(format!(
            "no eval.jsonl in {} or {} (the run has not evaluated yet?)",
            args.run.display(),
            run_dir.display()
        ))
        .into());
    }
    let records = chart::read_eval_log(&run_dir.join("eval.jsonl")).map_err(|e| BadInput(e.to_string()))?;
    let files = chart::plot_records(&run_dir, &records).map_err(|e| match e {
        chart::RunPlotError::Plot(e) => anyhow::Error::new(e),
        bad => BadInput(bad.to_string()).into(),
    })?;
    for f in files {
        println!("wrote {}", f.display());
    }
    print!("{}", chart::ladder_table(&records));
    Ok(ExitCode::SUCCESS)
}
