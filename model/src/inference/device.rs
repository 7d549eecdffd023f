//! Device names, numeric precision, and what libtorch this build uses.

use serde::{Deserialize, Serialize};
use tch::{Device, Kind};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("unknown device `{0}` (expected cpu, cuda, cuda:N or auto)")]
    Unknown(String),
    #[error("device `{0}` requested but CUDA is not available ({1})")]
    CudaUnavailable(String, String),
    #[error("device `{name}` requested but only {count} CUDA device(s) are present")]
    NoSuchCudaDevice { name: String, count: usize },
}

/// Why CUDA is unavailable although this build has the CUDA backend, and the way out.
pub const NO_GPU_HELP: &str = "no GPU or driver found: the default torch 2.13 wheel (scripts/setup.sh) is built for \
     CUDA 13 and needs an NVIDIA driver 580 or newer (`nvidia-smi` shows yours); with an older driver, install a \
     matching build, e.g. `KOMA_TORCH_CUDA=cu126 scripts/setup.sh --force` (driver 525+; also cu128, cu130, cpu), \
     then rebuild (`cargo build --release`)";

/// Why CUDA is unavailable in a build without the CUDA backend.
pub const NO_CUDA_BACKEND_HELP: &str = "this build's libtorch has no CUDA backend (a CPU-only torch, e.g. \
     KOMA_TORCH_CUDA=cpu): reinstall a CUDA build with `scripts/setup.sh --force` and rebuild";

/// Parses `cpu`, `cuda` (= `cuda:0`), `cuda:N` or `auto` (the first GPU when CUDA is
/// available, else the CPU) and checks that the device exists.
pub fn parse_device(name: &str) -> Result<Device, DeviceError> {
    crate::torch_link::anchor();
    let lower = name.trim().to_ascii_lowercase();
    let cuda_index = match lower.as_str() {
        "cpu" => return Ok(Device::Cpu),
        "auto" => return Ok(if tch::Cuda::is_available() { Device::Cuda(0) } else { Device::Cpu }),
        "cuda" | "gpu" => 0,
        other => match other.strip_prefix("cuda:").and_then(|n| n.parse::<usize>().ok()) {
            Some(i) => i,
            None => return Err(DeviceError::Unknown(name.to_string())),
        },
    };
    if !tch::Cuda::is_available() {
        let why = if crate::torch_link::CUDA_BACKEND_LINKED { NO_GPU_HELP } else { NO_CUDA_BACKEND_HELP };
        return Err(DeviceError::CudaUnavailable(name.to_string(), why.to_string()));
    }
    let count = tch::Cuda::device_count() as usize;
    if cuda_index >= count {
        return Err(DeviceError::NoSuchCudaDevice { name: name.to_string(), count });
    }
    Ok(Device::Cuda(cuda_index))
}

/// Numeric precision of inference weights and activations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f16 on CUDA, f32 on the CPU (where half precision is slow or unsupported).
    #[default]
    Auto,
    F32,
    F16,
    Bf16,
}

impl Precision {
    /// The tensor kind used on `device`.
    pub fn kind_for(self, device: Device) -> Kind {
        match self {
            Precision::Auto => {
                if device.is_cuda() {
                    Kind::Half
                } else {
                    Kind::Float
                }
            }
            Precision::F32 => Kind::Float,
            Precision::F16 => Kind::Half,
            Precision::Bf16 => Kind::BFloat16,
        }
    }
}

/// A precision name that is not one of `auto`, `f32`, `f16`, `bf16`.
#[derive(Debug, thiserror::Error)]
#[error("unknown precision `{0}` (auto, f32, f16, bf16)")]
pub struct UnknownPrecision(pub String);

impl std::str::FromStr for Precision {
    type Err = UnknownPrecision;
    fn from_str(s: &str) -> Result<Self, UnknownPrecision> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Precision::Auto),
            "f32" | "fp32" | "float" => Ok(Precision::F32),
            "f16" | "fp16" | "half" => Ok(Precision::F16),
            "bf16" | "bfloat16" => Ok(Precision::Bf16),
            _ => Err(UnknownPrecision(s.to_string())),
        }
    }
}

/// What this build links against, for `koma --version`-style reports and bench output.
#[derive(Clone, Debug, Serialize)]
pub struct TorchInfo {
    /// libtorch folder seen by the build (empty when unknown).
    pub libtorch_lib: &'static str,
    /// Whether libtorch_cuda was linked (the CUDA backend can register).
    pub cuda_backend_linked: bool,
    pub cuda_available: bool,
    pub cuda_devices: usize,
    pub cudnn_available: bool,
    /// Intra-op threads libtorch uses on the CPU.
    pub cpu_threads: i32,
}

pub fn torch_info() -> TorchInfo {
    crate::torch_link::anchor();
    let cuda_available = tch::Cuda::is_available();
    TorchInfo {
        libtorch_lib: env!("KOMA_LIBTORCH_LIB"),
        cuda_backend_linked: crate::torch_link::CUDA_BACKEND_LINKED,
        cuda_available,
        cuda_devices: if cuda_available { tch::Cuda::device_count() as usize } else { 0 },
        cudnn_available: cuda_available && tch::Cuda::cudnn_is_available(),
        cpu_threads: tch::get_num_threads(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_error_names_the_driver_requirement_and_the_fix() {
        if tch::Cuda::is_available() {
            return; // a GPU machine: nothing to report
        }
        let e = parse_device("cuda").unwrap_err().to_string();
        assert!(e.starts_with("device `cuda` requested but CUDA is not available"), "{e}");
        if crate::torch_link::CUDA_BACKEND_LINKED {
            assert!(e.contains("driver 580") && e.contains("KOMA_TORCH_CUDA=cu126 scripts/setup.sh --force"), "{e}");
        } else {
            assert!(e.contains("no CUDA backend"), "{e}");
        }
    }
}
