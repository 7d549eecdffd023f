//! koma's network contract: everything about a network that needs no libtorch, so that the
//! search, the engine and the arena build and run without it. Grouped by responsibility,
//! each group depending only on the ones before it:
//!
//! - [`network`]: [`NetConfig`] (the `[net]` settings), [`NetShape`] (input and output
//!   sizes) and [`parameter_specs`], the tensor table a network file must hold.
//! - [`encoding`]: positions and moves as input planes and policy labels, and a training
//!   sample as the encoder sees it ([`encoding::sample`], [`EncoderLabels`]).
//! - [`inference`]: [`Evaluator`], the forward pass as a service that every backend
//!   implements ([`UniformEvaluator`] for tests and baselines), its results
//!   ([`Evaluation`]) and input buffers, and [`Batcher`], one thread per evaluator
//!   gathering requests from many producers into large forward passes.
//! - [`file`](mod@file): checkpoint pairs and model files found, read and checked with typed
//!   errors ([`read_network_file`]), and [`Network`]: an evaluator with the encoder its
//!   planes need and the file's metadata.
//! - [`cpu`]: the portable backend, a pure-Rust forward pass of the same files.
//! - [`backend`]: which backend evaluates a network ([`Backend`]: auto, torch, cpu).
//!
//! libtorch is the other backend (the `koma-model` crate): training, CUDA, checkpoints
//! written from a learner.

pub mod backend;
pub mod cpu;
pub mod encoding;
pub mod file;
pub mod inference;
pub mod network;

pub use backend::{build_evaluator, load_network, resolve, Backend, BackendError, TorchBackend, UnknownBackend};
pub use cpu::CpuEvaluator;
pub use encoding::{EncodeTarget, Encoder, EncoderLabels, Footprint};
pub use file::checkpoint::{
    read_checkpoint_meta, CheckpointInfo, CheckpointMeta, CheckpointPaths, CHECKPOINT_FORMAT_VERSION,
};
pub use file::error::CheckpointError;
pub use file::leaf_material::LeafMaterial;
pub use file::loader::{
    check_meta, locate_model, read_model_meta, read_network_file, Expected, ModelSource, Network, NetworkFile,
};
pub use file::meta::{ModelMeta, LEAF_MATERIAL_KEY, MODEL_FILE_FORMAT, MODEL_FILE_FORMAT_VERSION};
pub use file::tensors::{tensor_digest, tensors_sha256, Weights};
pub use inference::batcher::{BatchError, Batcher, BatcherConfig, BatcherHandle, BatcherStats, EvalSlot};
pub use inference::evaluation::{Evaluation, Logits, SharedOutput};
pub use inference::evaluator::{
    check_input, CopyCounters, CopyStats, EvalError, EvalPart, Evaluator, UniformEvaluator,
};
pub use inference::host_buffer::{HostBlock, HostBuffer, PinnedMemory};
pub use inference::planes::{PlaneKind, PlaneValue, Planes, PlanesRef};
pub use network::config::{check_device_name, check_real, check_whole, ConfigError, NetConfig, Range};
pub use network::params::{parameter_count, parameter_specs, ParamSpec};
pub use network::shape::{NetShape, ShapeError, WDL_LEN};
