//! The value targets: what the value target of a sample mixes into its game's result
//! ([`ValueTargets`]), and those shares at the learner's current step
//! ([`ValueSchedule`], the material prior fading over the run).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dataio::Sample;
use rules::{material_balance, material_win_probability, quiescent_balance, Position, QuiescenceLimits};

use crate::config::MaterialSearch;

/// What the value target mixes into the game's result (`train.q_mix`,
/// `train.material_mix`, `train.future_mix`): `(1 - q_mix - material_mix - future_mix) *
/// result + q_mix * root WDL + material_mix * material WDL + future_mix * future WDL`,
/// the material read statically or after the captures (`train.material_search`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueTargets {
    /// Weight of the search's root WDL.
    pub q_mix: f32,
    /// Weight of the material prior: the side to move's material balance
    /// ([`rules::material_balance`]) as a win probability, `sigmoid(balance /
    /// material_scale)`, no draw.
    pub material_mix: f32,
    /// Material units per logistic unit of that probability (`train.material_scale`).
    pub material_scale: f32,
    /// Whether the material prior reads the static balance or the quiescent one
    /// ([`rules::quiescent_balance`], `train.material_search`).
    pub material_search: MaterialSearch,
    /// Weight of the short-horizon value: the search's root WDL a few plies later
    /// ([`dataio::AuxTargets::future_wdl`]); the result for samples without one.
    pub future_mix: f32,
}

impl Default for ValueTargets {
    /// The game's result alone; the material scale stays a valid divisor.
    fn default() -> ValueTargets {
        ValueTargets::RESULT
    }
}

impl ValueTargets {
    /// The game's result alone (AlphaZero).
    pub const RESULT: ValueTargets = ValueTargets {
        q_mix: 0.0,
        material_mix: 0.0,
        material_scale: rules::MATERIAL_SCALE as f32,
        material_search: MaterialSearch::Static,
        future_mix: 0.0,
    };

    pub fn from_config(cfg: &crate::config::TrainConfig) -> ValueTargets {
        ValueTargets {
            q_mix: cfg.q_mix as f32,
            material_mix: cfg.material_mix as f32,
            material_scale: cfg.material_scale as f32,
            material_search: cfg.material_search,
            future_mix: cfg.future_mix as f32,
        }
    }

    /// The side to move's material win probability in `pos`, when the mix uses it.
    pub(super) fn material_win(&self, pos: &Position) -> f32 {
        if self.material_mix > 0.0 {
            let balance = match self.material_search {
                MaterialSearch::Static => material_balance(pos, pos.side_to_move()),
                MaterialSearch::Quiescence => quiescent_balance(pos, pos.side_to_move(), QuiescenceLimits::default()),
            };
            material_win_probability(balance, self.material_scale as f64) as f32
        } else {
            0.0
        }
    }

    /// The value target of `s` (`material_win` from [`ValueTargets::material_win`]), or
    /// `None` when its game's result is unknown.
    pub(super) fn of(&self, s: &Sample, material_win: f32) -> Option<[f32; 3]> {
        let result = s.result?.wdl();
        let material = [material_win, 0.0, 1.0 - material_win];
        let own = 1.0 - self.q_mix - self.material_mix - self.future_mix;
        let future = s.aux.future_wdl.unwrap_or(result);
        Some(std::array::from_fn(|k| {
            own * result[k] + self.q_mix * s.root_wdl[k] + self.material_mix * material[k] + self.future_mix * future[k]
        }))
    }
}

/// The value targets at the learner's current step: [`ValueTargets`] whose material mix
/// fades over the run ([`crate::config::MaterialFade`]). The learner sets the step
/// ([`ValueSchedule::set_step`]; clones share it), the loader reads it for each batch
/// (the `prefetch` batches encoded ahead are a few steps behind).
#[derive(Clone, Debug)]
pub struct ValueSchedule {
    /// Every share but the material mix, which `material` gives at each step.
    targets: ValueTargets,
    material: crate::config::MaterialFade,
    step: Arc<AtomicU64>,
}

impl ValueSchedule {
    /// The value targets of `cfg`, at learner step `step` until it is set again.
    pub fn from_config(cfg: &crate::config::TrainConfig, step: u64) -> ValueSchedule {
        ValueSchedule {
            targets: ValueTargets::from_config(cfg),
            material: cfg.material_fade(),
            step: Arc::new(AtomicU64::new(step)),
        }
    }

    pub fn set_step(&self, step: u64) {
        self.step.store(step, Ordering::Relaxed);
    }

    /// The value targets at the step last set.
    pub fn current(&self) -> ValueTargets {
        let material_mix = self.material.at(self.step.load(Ordering::Relaxed)) as f32;
        ValueTargets { material_mix, ..self.targets }
    }
}

/// The same targets at every step.
impl From<ValueTargets> for ValueSchedule {
    fn from(targets: ValueTargets) -> ValueSchedule {
        let material = crate::config::MaterialFade { mix: targets.material_mix as f64, start: 0, end: 0 };
        ValueSchedule { targets, material, step: Arc::new(AtomicU64::new(0)) }
    }
}
