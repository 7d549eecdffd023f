//! Why the evaluation of a run cannot be set up ([`EvalSetupError`]): its own module, so
//! that the evaluation and the rungs it plays both name it without importing each other.

use std::path::PathBuf;

use arena::network_match::OpponentError;
use rules::Variant;

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
    #[error("eval.ladder: its ratings are for {ladder}, the run plays {run} (opponent `ladder`): set eval.ladder = \"{run}\"")]
    LadderVariant { ladder: Variant, run: Variant },
    #[error("eval.ladder_start: no rung '{0}' on eval.ladder")]
    LadderStart(String),
    /// A search that play cannot use (a Gumbel root).
    #[error("eval.search: {0}")]
    Search(#[from] arena::koma_player::KomaConfigError),
}
