//! Supervised learning, apart from the self-play run: `koma learn` ([`learn`]) trains a
//! network on existing data, and `koma gen` ([`teacher`]) makes that data from an engine.
//!
//! - [`records`]: game records (USI, KIF/KI2, CSA) as samples;
//! - [`datasets`]: every input `koma learn` reads (sample chunks, hcpe/hcpe3, psv, records);
//! - [`teacher`]: teacher data, an engine's moves and scores written as sample chunks;
//! - [`learn`]: the training itself, with a held-out validation share.

pub mod datasets;
pub mod learn;
pub mod records;
pub mod teacher;
