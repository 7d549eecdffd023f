//! Networks on disk, the libtorch side (reading and checking files is `nn::file`'s):
//! writing checkpoints ([`checkpoint`]) and model files ([`export`]), ONNX models for other
//! programs ([`onnx`], written only), loading a file onto libtorch ([`loader`]), freshly
//! initialised checkpoints ([`init`]), and tensors between libtorch and the host
//! ([`tensors`]).

pub mod checkpoint;
pub mod export;
pub mod init;
pub mod loader;
pub mod onnx;
pub mod tensors;
