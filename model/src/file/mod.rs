//! Networks on disk, read and written side by side: checkpoints ([`checkpoint`]), model
//! files ([`export`] writes, [`meta`] holds their header both ways), ONNX models for other
//! programs ([`onnx`], written only), the one way to load
//! either ([`loader`]) with the checks a file passes before and after its network is
//! built (`checks`), freshly initialised checkpoints ([`init`]), the safetensors codec
//! ([`tensors`], also the trainer's optimiser state's) and the errors of all of them
//! ([`error`]).

pub mod checkpoint;
mod checks;
pub mod error;
pub mod export;
pub mod init;
pub mod leaf_material;
pub mod loader;
pub mod meta;
pub mod onnx;
pub mod tensors;
