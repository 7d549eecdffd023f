//! koma's neural network layer, generic over a [`NetShape`] so that every shogi variant's
//! encoder can plug in later:
//!
//! - [`NetConfig`] / [`Net`]: a ResNet tower (optional KataGo-style global pooling blocks)
//!   with a convolutional policy head and a win/draw/loss value head, built on tch
//!   (libtorch). Parameter names are the checkpoint format (see `data/FORMAT.md`).
//! - [`checkpoint`]: safetensors weights + JSON metadata, written atomically; [`export`]:
//!   one self-describing model file for sharing a network.
//! - [`Network`] ([`loader`]): the one way to load either, with typed errors: the evaluator,
//!   the encoder its input planes need, and the file's metadata, together.
//! - [`Evaluator`]: the forward pass as a service (`TorchEvaluator` on CPU/CUDA,
//!   `UniformEvaluator` for tests and baselines).
//! - [`Batcher`]: one thread per device gathering requests from many producers into
//!   large forward passes.
//! - [`util`]: small helpers (content digests); atomic writes are `files::write_atomic`.
//! - [`bench_forward`]: evaluations per second for `koma bench nn`.

pub mod batcher;
pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod device;
pub mod encoding;
pub mod evaluation;
pub mod evaluator;
pub mod export;
pub mod host_buffer;
pub mod init;
mod load_error;
pub mod loader;
pub mod net;
pub mod planes;
pub mod shape;
mod torch_link;
pub mod util;
mod weights;

pub use batcher::{BatchError, Batcher, BatcherConfig, BatcherHandle, BatcherStats, EvalSlot};
pub use bench::{bench_forward, BenchError, BenchOptions, BenchRow};
pub use checkpoint::{
    read_checkpoint_meta, save_checkpoint, CheckpointError, CheckpointInfo, CheckpointMeta, CheckpointPaths,
    CHECKPOINT_FORMAT_VERSION,
};
pub use config::{check_device_name, check_real, check_whole, ConfigError, NetConfig, Range};
pub use device::{parse_device, torch_info, DeviceError, Precision, TorchInfo};
pub use evaluation::{Evaluation, Logits};
pub use evaluator::{padded_batch, CopyStats, EvalError, EvalPart, Evaluator, TorchEvaluator, UniformEvaluator};
pub use export::{export_model, write_model_file, ExportedModel, MODEL_FILE_FORMAT, MODEL_FILE_FORMAT_VERSION};
pub use host_buffer::HostBuffer;
pub use init::{init_checkpoint, InitError};
pub use loader::{load_net, locate_model, read_model_meta, Expected, ModelMeta, ModelSource, Network};
pub use net::{Net, NetError, ResNet};
pub use planes::{PlaneKind, PlaneValue, Planes, PlanesRef};
pub use shape::{NetShape, ShapeError, WDL_LEN};
pub use weights::{tensor_digest, tensors_sha256};

/// Re-exported so that dependents use the same tch version without naming it.
pub use tch;
