//! Names of a run's objects: the run layout is `dataio`'s ([`dataio::run_layout`]; the
//! layout is documented in `data/FORMAT.md`, "Runs"), named here for the roles.

pub use dataio::run_layout::*;
