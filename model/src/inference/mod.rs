//! Evaluating positions with libtorch: its evaluator ([`torch_evaluator`]), device and
//! precision selection ([`device`]) and the forward-pass benchmark ([`bench`](mod@bench)).
//! The interface, the batcher and the buffers are the `nn` crate's.

pub mod bench;
pub mod device;
pub mod torch_evaluator;
