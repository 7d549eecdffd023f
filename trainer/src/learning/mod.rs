//! The network being trained and how its weights move.
//!
//! - [`net_trainer`]: a network being trained ([`NetTrainer`](net_trainer::NetTrainer)):
//!   loss (policy cross-entropy + WDL cross-entropy), warm-up schedule, gradient clipping,
//!   f16 autocast with loss scaling on CUDA.
//! - [`optim`]: SGD with momentum and AdamW in tch tensor operations; their state is plain
//!   named tensors saved next to each checkpoint ([`optim::optim_path`]).
//! - [`ema`]: the average of the weights that checkpoints hold (`train.ema_decay`).
//! - [`swa`]: the mean of the weights at a run's last checkpoints, which its last
//!   checkpoint holds (`train.swa_share`).

pub mod ema;
pub mod net_trainer;
pub mod optim;
pub mod swa;
