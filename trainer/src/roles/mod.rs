//! The roles of a training run and what they share.
//!
//! A run lives in a [`store::RunStore`] (a local folder, S3, GCS). The learner
//! ([`learner::LearnerRole`], `koma learner`) owns the run's state and checkpoints and
//! publishes networks, one learner per run (it holds the run's [`store::lease`]); self-play workers ([`worker::run_worker`], `koma worker`) read the
//! newest network and write sample chunks. They meet only in the store, so any number of
//! workers can start and stop at any time. `koma train` (the crate's `run` module) runs the
//! learner with self-play threads in one process.
//!
//! - the names of a run's objects are `dataio::run_layout`'s; [`files`]: the store and the local folder
//!   of this process; [`state`]: the learner's state and where it resumes.
//! - [`network`]: loading, checkpoints, publishing; [`intake`]: chunks into the window.
//! - [`course`]: the evaluation of a run's checkpoints on its own (`koma evaluate --run`).
//! - [`selfplay`]: self-play threads and the chunk sink; [`uploader`]: uploads with a
//!   local spool; [`signal`], [`display`]: SIGTERM and the status line (through the
//!   `progress` crate).

pub mod course;
pub mod display;
pub mod files;
pub mod intake;
pub mod learner;
pub mod network;
pub mod selfplay;
pub mod signal;
pub mod state;
pub mod uploader;
pub mod worker;
