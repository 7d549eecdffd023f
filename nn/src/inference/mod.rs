//! The forward pass as a service: the [`Evaluator`](evaluator::Evaluator) interface every
//! backend implements, its inputs and results, and the batcher that feeds it.

pub mod batcher;
pub mod evaluation;
pub mod evaluator;
pub mod host_buffer;
pub mod planes;
