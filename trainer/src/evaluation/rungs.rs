//! The rungs the `ladder` opponent may play ([`LadderPlan`]): those of `eval.ladder`
//! whose players start (one warning names the others and `scripts/install-engines.sh`),
//! lowest first, with where the first staircase starts (`eval.ladder_start`) and the most
//! rungs an evaluation plays (`eval.ladder_rungs`); and the note an evaluation gets when the
//! network beats the top one of them outright.

use std::path::Path;

use arena::ladder::Ladder;
use arena::network_match::{OpponentError, ENGINE_TIMEOUT};
use arena::PlayerSpec;
use rules::Variant;

use super::report::EvalReport;
use super::setup_error::EvalSetupError;
use super::staircase::OUTRIGHT;
use crate::config::EvalConfig;

/// A rung the `ladder` opponent may play: its player (named after it) and its rating.
pub(super) struct LadderRung {
    pub spec: PlayerSpec,
    pub elo: f64,
}

/// The rungs of `ladder` opponents: those whose players start, lowest first; where the
/// staircase starts; the most it plays per evaluation; whether rungs were left out.
pub(super) struct LadderPlan {
    pub rungs: Vec<LadderRung>,
    pub start: f64,
    pub max_rungs: usize,
    pub missing: bool,
}

impl LadderPlan {
    /// No rungs: an evaluation without the `ladder` opponent.
    pub(super) fn none() -> LadderPlan {
        LadderPlan { rungs: Vec::new(), start: 0.0, max_rungs: 0, missing: false }
    }

    /// The rungs of `ladder` whose players start (a warning names the others), from
    /// `eval.ladder_start`, at most `eval.ladder_rungs` per evaluation.
    pub(super) fn new(
        ecfg: &EvalConfig,
        ladder: &Ladder,
        variant: Variant,
        workdir: &Path,
    ) -> Result<(LadderPlan, Option<String>), EvalSetupError> {
        if ladder.variant != variant {
            return Err(EvalSetupError::LadderVariant { ladder: ladder.variant, run: variant });
        }
        let (mut rungs, mut missing) = (Vec::new(), Vec::new());
        let mut why_first = None;
        for rung in &ladder.rungs {
            let spec =
                ladder.player_spec(rung).map_err(|source| OpponentError::Rung { rung: rung.name.clone(), source })?;
            match spec.create(variant, 1, workdir, ENGINE_TIMEOUT) {
                Ok(_) => rungs.push(LadderRung { spec, elo: rung.elo }),
                Err(why) => {
                    why_first.get_or_insert(why.to_string());
                    missing.push(rung.name.clone());
                }
            }
        }
        rungs.sort_by(|a, b| a.elo.total_cmp(&b.elo));
        let start = match &ecfg.ladder_start {
            Some(name) => ladder.rung(name).ok_or_else(|| EvalSetupError::LadderStart(name.clone()))?.elo,
            None => rungs.first().map_or(0.0, |r| r.elo),
        };
        let warning = why_first.map(|why| {
            format!(
                "evaluation: the ladder's rungs {} left out, their players do not start ({why}); \
                 scripts/install-engines.sh installs the engines",
                missing.join(", ")
            )
        });
        let plan = LadderPlan { rungs, start, max_rungs: ecfg.ladder_rungs, missing: !missing.is_empty() };
        Ok((plan, warning))
    }

    /// When the network beat the top rung it can play outright: its rating has no upper
    /// bound here; say so, and how to install the engines of the rungs above.
    pub(super) fn ceiling_note(&self, report: &EvalReport) -> Option<String> {
        let top = self.rungs.last()?;
        let (placement, _) = report.ladder?;
        let beaten = report.results.iter().any(|r| r.name == top.spec.name && r.outcome.wdl.score() >= OUTRIGHT);
        if !beaten || placement.high.is_finite() {
            return None;
        }
        let hint = if self.missing {
            "; the rungs above need the Debian engines: scripts/install-engines.sh"
        } else {
            ", the top of the ladder"
        };
        Some(format!(
            "eval @{}: the network beat {} ({:+.0}), the highest rung it can play, outright: its ladder Elo is at least \
             {:+.0}, with no upper bound{hint}",
            report.step, top.spec.name, top.elo, placement.low
        ))
    }
}
