//! Network tensors between libtorch and the host: copies of a [`Net`]'s variables for
//! writing (`nn::file::tensors` is the codec), and checked weights copied into a [`Net`].

use std::collections::BTreeMap;
use std::path::Path;

use nn::file::tensors::{HostTensor, Weights};
use nn::CheckpointError;
use tch::{Device, Kind, Tensor};

use crate::network::net::{Net, NetError};

/// An f32 host copy of `t` (any device and kind).
pub fn host_tensor(name: impl Into<String>, t: &Tensor) -> Result<HostTensor, tch::TchError> {
    let t = t.f_detach()?.f_to_device(Device::Cpu)?.f_to_kind(Kind::Float)?.f_contiguous()?;
    let numel = t.numel();
    let mut data = vec![0f32; numel];
    t.f_copy_data(&mut data, numel)?;
    let shape = t.size().iter().map(|&d| d as usize).collect();
    Ok(HostTensor { name: name.into(), shape, bytes: data.iter().flat_map(|x| x.to_le_bytes()).collect() })
}

/// Host f32 copies of every variable of `net` (parameters and batch norm statistics),
/// sorted by name, and the number of scalars.
pub(crate) fn host_tensors(net: &Net) -> Result<(Vec<HostTensor>, u64), CheckpointError> {
    let vars: BTreeMap<String, Tensor> = net.var_store().variables().into_iter().collect();
    let host = vars
        .iter()
        .map(|(name, t)| host_tensor(name.as_str(), t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(NetError::from)?;
    let scalars = host.iter().map(|t| t.numel() as u64).sum();
    Ok((host, scalars))
}

/// Copies checked weights into `net`: exactly the net's names, each with its shape.
pub(crate) fn copy_into(net: &Net, weights: &Weights, path: &Path) -> Result<(), CheckpointError> {
    let vars = net.var_store().variables();
    for (name, _, _) in weights.iter() {
        if !vars.contains_key(name) {
            return Err(CheckpointError::UnexpectedTensor { path: path.into(), name: name.into() });
        }
    }
    for (name, var) in &vars {
        let (shape, data) = weights
            .get(name)
            .ok_or_else(|| CheckpointError::MissingTensor { path: path.into(), name: name.clone() })?;
        let expected: Vec<usize> = var.size().iter().map(|&d| d as usize).collect();
        if shape != expected.as_slice() {
            let found = shape.to_vec();
            return Err(CheckpointError::TensorShape { path: path.into(), name: name.clone(), expected, found });
        }
        let dims: Vec<i64> = expected.iter().map(|&d| d as i64).collect();
        let copy = || -> Result<(), tch::TchError> {
            let src = Tensor::f_from_slice(data)?.f_view(dims.as_slice())?;
            let mut dst = var.shallow_clone();
            tch::no_grad(|| dst.f_copy_(&src))?;
            Ok(())
        };
        copy().map_err(NetError::from)?;
    }
    Ok(())
}
