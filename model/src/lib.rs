//! koma's libtorch backend: the network as tch modules for training and for inference on
//! the CPU or CUDA. The network contract (settings, shape, encoding, files read and
//! checked, the [`Evaluator`] interface and its batcher) is the `nn` crate's, re-exported
//! here so that the training crates name one crate. Grouped by responsibility:
//!
//! - [`network`]: [`Net`], the ResNet of [`NetConfig`] as tch modules (parameter names are
//!   the checkpoint format, `data/FORMAT.md`), and its fused inference form.
//! - [`inference`]: [`TorchEvaluator`] on the CPU or CUDA; devices and precisions;
//!   [`bench_forward`], evaluations per second for `koma bench nn`.
//! - [`file`](mod@file): checkpoints written from a learner ([`save_checkpoint`], atomically
//!   with `files::write_atomic`), model files ([`export_model`]), ONNX export for other
//!   programs ([`export_onnx`]), and [`load_torch_network`] / [`load_net`], a checked file onto
//!   libtorch.
//! - [`threads`]: the one policy for libtorch's CPU threads.

pub mod file;
pub mod inference;
pub mod network;
pub mod threads;
mod torch_link;

/// The contract's modules under their old paths (`model::encoding::Encoder`, ...).
pub use nn::encoding;
pub use nn::*;

pub use file::checkpoint::save_checkpoint;
pub use file::export::{export_model, write_model_file, Exported};
pub use file::init::{fresh_network, init_checkpoint, InitError};
pub use file::loader::{load_net, load_torch_network, network_of_net, TORCH_BACKEND};
pub use file::onnx::{
    export_onnx, write_onnx_file, ONNX_BATCH_DIM, ONNX_FORMAT, ONNX_FORMAT_VERSION, ONNX_INPUT, ONNX_IR_VERSION,
    ONNX_OPSET, ONNX_POLICY_OUTPUT, ONNX_WDL_OUTPUT,
};
pub use inference::bench::{bench_forward, BenchError, BenchOptions, BenchRow};
pub use inference::device::{parse_device, torch_info, DeviceError, Precision, TorchInfo, UnknownPrecision};
pub use inference::torch_evaluator::{padded_batch, plane_kind_for, torch_kind, TorchEvaluator};
pub use network::net::{HeadOutputs, Kernels, Net, NetError, ResNet, UnknownKernels};
pub use threads::{set_torch_threads, CpuShare};

/// Re-exported so that dependents use the same tch version without naming it.
pub use tch;
