//! Where a tree's time goes, phase by phase (`koma bench tree`): a clock that a
//! [`crate::tree::Tree`] runs only when asked ([`crate::tree::Tree::set_phase_timing`]),
//! so that the search pays one predictable branch per phase otherwise.

use std::time::Instant;

/// A phase of a simulation in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Down the tree by PUCT (moves played on the working position) and back up the
    /// moves again (taken back).
    Descend,
    /// At a new leaf: the rules' end of the game, the legal moves with their labels, the
    /// edges, the mate search at expansion.
    Expand,
    /// The leaf's input planes.
    Encode,
    /// The rules' material at the leaf (`leaf_material_mix`).
    Material,
    /// A result added along the path: an evaluation's (softmax of the priors, then the
    /// values) or an exact one's.
    Backup,
}

impl Phase {
    pub const ALL: [Phase; 5] = [Phase::Descend, Phase::Expand, Phase::Encode, Phase::Material, Phase::Backup];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Descend => "descend",
            Phase::Expand => "expand",
            Phase::Encode => "encode",
            Phase::Material => "material",
            Phase::Backup => "backup",
        }
    }
}

/// Nanoseconds spent in each [`Phase`], and what the simulations did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    pub nanos: [u64; 5],
    /// Simulations that ended at a leaf to evaluate, at an exact result, in a collision.
    pub leaves: u64,
    pub exact: u64,
    pub collisions: u64,
}

impl PhaseTimes {
    pub fn get(&self, p: Phase) -> u64 {
        self.nanos[p as usize]
    }

    pub fn add(&mut self, o: &PhaseTimes) {
        for (a, b) in self.nanos.iter_mut().zip(o.nanos) {
            *a += b;
        }
        self.leaves += o.leaves;
        self.exact += o.exact;
        self.collisions += o.collisions;
    }
}

/// The clock a tree runs while timing: the time since the last lap goes to the phase
/// the lap names.
#[derive(Debug, Default)]
pub(crate) struct PhaseClock {
    on: bool,
    last: Option<Instant>,
    pub(crate) times: PhaseTimes,
}

impl PhaseClock {
    pub(crate) fn set(&mut self, on: bool) {
        self.on = on;
        self.last = None;
    }

    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// Starts timing a phase.
    #[inline]
    pub(crate) fn start(&mut self) {
        if self.on {
            self.last = Some(Instant::now());
        }
    }

    /// The time since the last start or lap goes to `p`.
    #[inline]
    pub(crate) fn lap(&mut self, p: Phase) {
        if let (true, Some(last)) = (self.on, self.last) {
            let now = Instant::now();
            self.times.nanos[p as usize] += now.duration_since(last).as_nanos() as u64;
            self.last = Some(now);
        }
    }

    pub(crate) fn take(&mut self) -> PhaseTimes {
        std::mem::take(&mut self.times)
    }
}
