//! Which backend evaluates a network: libtorch (in programs built with it, the only one
//! for a GPU) or the portable CPU backend ([`crate::CpuEvaluator`]). The engine's
//! `Backend` option and the arena's `backend=` read [`Backend`]; [`load_network`] builds
//! one evaluator per device.

use std::path::Path;
use std::sync::Arc;

use crate::cpu::CpuEvaluator;
use crate::file::error::CheckpointError;
use crate::file::loader::{read_network_file, Expected, Network, NetworkFile};
use crate::inference::evaluator::Evaluator;

/// A backend as the user names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// libtorch on a GPU; on the CPU the faster of the two there ([`AUTO_ON_CPU`]).
    #[default]
    Auto,
    Torch,
    Cpu,
}

/// What `auto` takes on the CPU: the portable backend. One of its forward passes is about
/// as fast as libtorch's (0.8 to 2 times, by batch), and it runs one a search thread
/// where libtorch's evaluator runs one at a time, so koma-usi searches 1.7 to 2.1 times as many
/// nodes a second on two cores (docs/performance.md, "Backends").
pub const AUTO_ON_CPU: Backend = Backend::Cpu;

impl Backend {
    pub const NAMES: [&'static str; 3] = ["auto", "torch", "cpu"];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Torch => "torch",
            Backend::Cpu => "cpu",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend `{0}` (expected auto, torch or cpu)")]
pub struct UnknownBackend(pub String);

impl std::str::FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Backend::Auto),
            "torch" | "libtorch" => Ok(Backend::Torch),
            "cpu" | "portable" => Ok(Backend::Cpu),
            _ => Err(UnknownBackend(s.to_string())),
        }
    }
}

/// libtorch, as a program built with it hands it in (`koma_model::TORCH_BACKEND`): this
/// crate cannot name it, since libtorch is exactly what it does without.
#[derive(Clone, Copy)]
pub struct TorchBackend {
    /// libtorch's evaluator of `file` on `device` (`cpu`, `cuda`, `cuda:N`, `auto`).
    pub load: fn(&NetworkFile, &str) -> Result<Arc<dyn Evaluator>, CheckpointError>,
    /// Whether `device` is (or `auto` resolves to) a GPU; errors name a missing one.
    pub is_gpu: fn(&str) -> Result<bool, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("Backend torch: this build has no libtorch (it was built without the `torch` feature); use Backend cpu")]
    NoTorch,
    #[error(
        "Device {device}: the CPU backend runs on the CPU only; a GPU needs Backend torch (a build with libtorch)"
    )]
    CpuOnly { device: String },
    #[error("Device {0}")]
    Device(String),
    #[error(transparent)]
    Load(#[from] CheckpointError),
}

fn names_gpu(device: &str) -> bool {
    let d = device.trim().to_ascii_lowercase();
    d == "gpu" || d.starts_with("cuda")
}

/// The backend that `backend` means for `device` with `torch` (`None`: not linked).
pub fn resolve(backend: Backend, device: &str, torch: Option<&TorchBackend>) -> Result<Backend, BackendError> {
    match (backend, torch) {
        (Backend::Torch, None) => Err(BackendError::NoTorch),
        (Backend::Torch, Some(_)) => Ok(Backend::Torch),
        (Backend::Cpu, _) if names_gpu(device) => Err(BackendError::CpuOnly { device: device.into() }),
        (Backend::Cpu, _) => Ok(Backend::Cpu),
        (Backend::Auto, None) if names_gpu(device) => Err(BackendError::CpuOnly { device: device.into() }),
        (Backend::Auto, None) => Ok(Backend::Cpu),
        (Backend::Auto, Some(t)) => match (t.is_gpu)(device).map_err(BackendError::Device)? {
            true => Ok(Backend::Torch),
            false => Ok(AUTO_ON_CPU),
        },
    }
}

/// One evaluator of `file` for `device` on `backend` (resolved: torch or cpu).
pub fn build_evaluator(
    file: &NetworkFile,
    backend: Backend,
    device: &str,
    torch: Option<&TorchBackend>,
) -> Result<Arc<dyn Evaluator>, BackendError> {
    match resolve(backend, device, torch)? {
        Backend::Torch => Ok((torch.ok_or(BackendError::NoTorch)?.load)(file, device)?),
        _ => Ok(Arc::new(CpuEvaluator::new(file)?)),
    }
}

/// Loads the network at `path` with one evaluator per device of `devices` (the first's is
/// the [`Network`]'s), each probed; the backend each device resolved to comes with it.
pub fn load_network(
    path: &Path,
    expected: &Expected,
    backend: Backend,
    devices: &[&str],
    torch: Option<&TorchBackend>,
) -> Result<(Network, Vec<Arc<dyn Evaluator>>, Vec<Backend>), BackendError> {
    let file = read_network_file(path, expected)?;
    let mut evaluators = Vec::with_capacity(devices.len());
    let mut resolved = Vec::with_capacity(devices.len());
    for device in devices {
        resolved.push(resolve(backend, device, torch)?);
        let evaluator = build_evaluator(&file, backend, device, torch)?;
        crate::file::checks::probe_evaluator(evaluator.as_ref(), &file.encoder, &file.weights_path)?;
        evaluators.push(evaluator);
    }
    let first = evaluators.first().cloned().ok_or_else(|| BackendError::Device("list is empty".into()))?;
    let network = Network::from_file(file, first)?;
    Ok((network, evaluators, resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torch_on(gpu: bool) -> TorchBackend {
        fn no_load(_: &NetworkFile, _: &str) -> Result<Arc<dyn Evaluator>, CheckpointError> {
            unreachable!("resolve never loads")
        }
        TorchBackend { load: no_load, is_gpu: if gpu { |_| Ok(true) } else { |d| Ok(names_gpu(d)) } }
    }

    #[test]
    fn names_round_trip_and_bad_ones_are_refused() {
        for name in Backend::NAMES {
            assert_eq!(name.parse::<Backend>().unwrap().name(), name);
        }
        assert_eq!("CPU".parse::<Backend>(), Ok(Backend::Cpu));
        assert!("tensorrt".parse::<Backend>().unwrap_err().to_string().contains("auto, torch or cpu"));
    }

    #[test]
    fn auto_takes_torch_on_a_gpu_and_the_cpu_backend_on_the_cpu() {
        let (gpu, cpu) = (torch_on(true), torch_on(false));
        assert_eq!(resolve(Backend::Auto, "auto", Some(&gpu)).unwrap(), Backend::Torch);
        assert_eq!(resolve(Backend::Auto, "auto", Some(&cpu)).unwrap(), AUTO_ON_CPU);
        assert_eq!(resolve(Backend::Auto, "auto", None).unwrap(), Backend::Cpu);
        assert_eq!(resolve(Backend::Torch, "cpu", Some(&cpu)).unwrap(), Backend::Torch);
    }

    #[test]
    fn impossible_choices_say_why() {
        assert!(matches!(resolve(Backend::Torch, "cpu", None), Err(BackendError::NoTorch)));
        assert!(matches!(resolve(Backend::Cpu, "cuda:1", Some(&torch_on(true))), Err(BackendError::CpuOnly { .. })));
        assert!(matches!(resolve(Backend::Auto, "cuda", None), Err(BackendError::CpuOnly { .. })));
        assert!(BackendError::NoTorch.to_string().contains("Backend cpu"));
    }
}
