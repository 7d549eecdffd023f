//! Evaluating positions: input planes ([`planes`], [`host_buffer`]), the forward pass as a
//! service ([`evaluator`], its results in [`evaluation`]), the batching thread
//! ([`batcher`]), device selection ([`device`]) and the forward-pass benchmark ([`bench`](mod@bench)).

pub mod batcher;
pub mod bench;
pub mod device;
pub mod evaluation;
pub mod evaluator;
pub mod host_buffer;
pub mod planes;
