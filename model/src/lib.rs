//! koma's neural network layer, generic over a [`NetShape`] so that every shogi variant's
//! encoder can plug in later. Grouped by responsibility, each group depending only on the
//! ones before it:
//!
//! - [`network`]: [`NetConfig`] / [`Net`], a ResNet tower (optional KataGo-style global
//!   pooling blocks) with a convolutional policy head and a win/draw/loss value head, built
//!   on tch (libtorch). Parameter names are the checkpoint format (see `data/FORMAT.md`);
//!   [`parameter_specs`] lists them with their shapes without building a network.
//! - [`encoding`]: positions and moves as input planes and policy labels.
//! - [`inference`]: [`Evaluator`], the forward pass as a service (`TorchEvaluator` on
//!   CPU/CUDA, `UniformEvaluator` for tests and baselines); [`Batcher`], one thread per
//!   device gathering requests from many producers into large forward passes; devices;
//!   [`bench_forward`], evaluations per second for `koma bench nn`.
//! - [`file`](mod@file): checkpoints (safetensors weights + JSON metadata, written atomically with
//!   `files::write_atomic`), model files (one self-describing file for sharing a network),
//!   [`Network`], the one way to load either with typed errors (the evaluator, the encoder
//!   its input planes need, and the file's metadata, together), ONNX export for other
//!   programs ([`export_onnx`]), and the safetensors codec
//!   ([`file::tensors`]) that the trainer's optimiser state uses too.
//! - [`threads`]: the one policy for libtorch's CPU threads.

pub mod encoding;
pub mod file;
pub mod inference;
pub mod network;
pub mod threads;
mod torch_link;

pub use file::checkpoint::{
    read_checkpoint_meta, save_checkpoint, CheckpointInfo, CheckpointMeta, CheckpointPaths, CHECKPOINT_FORMAT_VERSION,
};
pub use file::error::CheckpointError;
pub use file::export::{export_model, write_model_file, Exported};
pub use file::init::{init_checkpoint, InitError};
pub use file::loader::{load_net, locate_model, read_model_meta, Expected, ModelSource, Network};
pub use file::meta::{LeafMaterial, ModelMeta, LEAF_MATERIAL_KEY, MODEL_FILE_FORMAT, MODEL_FILE_FORMAT_VERSION};
pub use file::onnx::{
    export_onnx, write_onnx_file, ONNX_BATCH_DIM, ONNX_FORMAT, ONNX_FORMAT_VERSION, ONNX_INPUT, ONNX_IR_VERSION,
    ONNX_OPSET, ONNX_POLICY_OUTPUT, ONNX_WDL_OUTPUT,
};
pub use file::tensors::{tensor_digest, tensors_sha256};
pub use inference::batcher::{BatchError, Batcher, BatcherConfig, BatcherHandle, BatcherStats, EvalSlot};
pub use inference::bench::{bench_forward, BenchError, BenchOptions, BenchRow};
pub use inference::device::{parse_device, torch_info, DeviceError, Precision, TorchInfo, UnknownPrecision};
pub use inference::evaluation::{Evaluation, Logits};
pub use inference::evaluator::{
    padded_batch, CopyStats, EvalError, EvalPart, Evaluator, TorchEvaluator, UniformEvaluator,
};
pub use inference::host_buffer::HostBuffer;
pub use inference::planes::{PlaneKind, PlaneValue, Planes, PlanesRef};
pub use network::config::{check_device_name, check_real, check_whole, ConfigError, NetConfig, Range};
pub use network::net::{HeadOutputs, Kernels, Net, NetError, ResNet, UnknownKernels};
pub use network::params::{parameter_count, parameter_specs, ParamSpec};
pub use network::shape::{NetShape, ShapeError, WDL_LEN};
pub use threads::{set_torch_threads, CpuShare};

/// Re-exported so that dependents use the same tch version without naming it.
pub use tch;
