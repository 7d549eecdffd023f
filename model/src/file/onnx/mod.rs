//! ONNX export (`koma export --format onnx`): the network as an ONNX model, for programs
//! that run networks with onnxruntime, TensorRT or DirectML. Export only: koma itself
//! loads checkpoints and model files. The graph is the inference forward pass (batch norms
//! folded, training-only heads left out, `graph`), its protobuf messages are a subset of
//! ONNX's schema (`proto`), and the model's `metadata_props` carry koma's metadata
//! (variant, encoder version, net config, step, the names of the input and policy planes),
//! so the file describes itself. `data/FORMAT.md` ("ONNX files") documents it.

mod graph;
mod proto;

use std::path::Path;

use prost::Message;

use super::export::{export_parts, export_with, Exported};
use crate::network::net::Net;
use nn::encoding::Encoder;
use nn::file::error::CheckpointError;
use nn::file::meta::{meta_entries, ModelMeta};
use nn::network::params::{parameter_count, parameter_specs};
use proto::{ModelProto, OperatorSetIdProto, StringStringEntryProto};

pub use graph::{
    BATCH_DIM as ONNX_BATCH_DIM, INPUT as ONNX_INPUT, POLICY_OUTPUT as ONNX_POLICY_OUTPUT,
    WDL_OUTPUT as ONNX_WDL_OUTPUT,
};

/// The ONNX operator set the graph declares (default domain): 17 (ONNX 1.12, 2022), which
/// onnxruntime reads since 1.13 and TensorRT's ONNX parser since 8.6 (the test runs
/// onnxruntime 1.32). Every operator used is unchanged since opset 13.
pub const ONNX_OPSET: i64 = 17;

/// The ONNX IR version written: 8, the one of opset 17 (ONNX 1.12).
pub const ONNX_IR_VERSION: i64 = 8;

/// `format` in the `metadata_props` of an exported ONNX model.
pub const ONNX_FORMAT: &str = "koma-onnx";

/// Version of the ONNX export's layout (names, outputs, metadata keys); bumped when one of
/// them changes meaning.
pub const ONNX_FORMAT_VERSION: u32 = 1;

/// The largest file written: protobuf messages stop at 2 GiB (ONNX's external data files,
/// which lift that limit, are not written).
const MAX_ONNX_BYTES: u64 = (1 << 31) - 1;

/// Loads the network at `source` (a checkpoint or a model file; every load-time check
/// applies) and writes it to `out` as an ONNX model, atomically. Refuses to overwrite the
/// weights of a checkpoint pair.
pub fn export_onnx(source: impl AsRef<Path>, out: impl AsRef<Path>) -> Result<Exported, CheckpointError> {
    export_with(source.as_ref(), out.as_ref(), write_onnx_file)
}

/// Writes `net` (playing `meta.variant`) as an ONNX model at `out`, atomically.
pub fn write_onnx_file(net: &Net, meta: &ModelMeta, out: &Path) -> Result<Exported, CheckpointError> {
    let (bytes, digest, meta) = onnx_model(net, meta, out)?;
    files::write_atomic(out, &bytes).map_err(|cause| CheckpointError::Io { path: out.into(), cause })?;
    Ok(Exported { path: out.into(), bytes: bytes.len() as u64, tensors_sha256: digest, meta })
}

/// The ONNX model's bytes, the tensor digest and the metadata it records (`out` names
/// the file in errors).
fn onnx_model(net: &Net, meta: &ModelMeta, out: &Path) -> Result<(Vec<u8>, String, ModelMeta), CheckpointError> {
    let encoder = Encoder::for_net(meta.variant, net.config());
    if encoder.net_shape() != net.shape() {
        return Err(CheckpointError::EncoderShape {
            path: out.into(),
            variant: meta.variant,
            recorded: net.shape(),
            encoder: encoder.net_shape(),
        });
    }
    // Checked before anything is copied: the weights alone would not fit.
    let weight_bytes = parameter_count(&parameter_specs(net.config(), net.shape())).saturating_mul(4);
    if weight_bytes > MAX_ONNX_BYTES {
        return Err(CheckpointError::OnnxTooLarge { path: out.into(), bytes: weight_bytes, limit: MAX_ONNX_BYTES });
    }
    let (tensors, digest, meta) = export_parts(net, meta)?;
    let graph = graph::build(&graph::Weights::new(&tensors), net.config(), net.shape(), &graph_name(&meta));
    drop(tensors);
    let model = ModelProto {
        ir_version: ONNX_IR_VERSION,
        producer_name: "koma".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        domain: String::new(),
        model_version: meta.step.min(i64::MAX as u64) as i64,
        doc_string: format!(
            "koma {} network, {} blocks x {} channels, step {} (data/FORMAT.md, \"ONNX files\")",
            meta.variant, meta.net.blocks, meta.net.channels, meta.step
        ),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: ONNX_OPSET }],
        metadata_props: metadata_props(&meta, &encoder, &digest),
    };
    let len = model.encoded_len() as u64;
    if len > MAX_ONNX_BYTES {
        return Err(CheckpointError::OnnxTooLarge { path: out.into(), bytes: len, limit: MAX_ONNX_BYTES });
    }
    Ok((model.encode_to_vec(), digest, meta))
}

fn graph_name(meta: &ModelMeta) -> String {
    format!("koma-{}-b{}c{}", meta.variant.name(), meta.net.blocks, meta.net.channels)
}

/// The model's `metadata_props`: the model file's keys (`format` is `koma-onnx`) plus what a
/// program needs to feed the network and read its outputs.
fn metadata_props(meta: &ModelMeta, encoder: &Encoder, digest: &str) -> Vec<StringStringEntryProto> {
    let names = |v: Vec<String>| serde_json::to_string(&v).expect("strings serialise");
    let input_planes = names(encoder.input_plane_info().iter().map(|p| p.to_string()).collect());
    let policy_planes = names(encoder.policy_plane_info().iter().map(|p| p.to_string()).collect());
    let format = [("format", ONNX_FORMAT.to_string()), ("format_version", ONNX_FORMAT_VERSION.to_string())];
    let layout = [
        ("input_planes", input_planes),
        ("policy_planes", policy_planes),
        ("wdl", "win, draw, loss probabilities (softmax) for the side to move".to_string()),
    ];
    format
        .into_iter()
        .chain(meta_entries(meta, digest))
        .chain(layout)
        .map(|(key, value)| StringStringEntryProto { key: key.into(), value })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nn::encoding::ENCODER_VERSION;
    use nn::file::meta::{LeafMaterial, LEAF_MATERIAL_KEY};
    use nn::network::config::NetConfig;
    use prost::Message;

    /// The leaf material record reaches `metadata_props` as the model file's key, and a
    /// network without one has no such key.
    #[test]
    fn metadata_props_carry_the_leaf_material_record() {
        let config = NetConfig {
            blocks: 1,
            channels: 8,
            global_pooling_every: 0,
            global_pooling_channels: 4,
            policy_channels: None,
            value_channels: 2,
            value_hidden: 8,
            zero_init_residual: false,
            attack_planes: false,
            reply_policy_head: false,
            material_head: false,
        };
        let encoder = Encoder::for_net(rules::Variant::Shogi, &config);
        let net = Net::new(&config, encoder.net_shape(), 1, tch::Device::Cpu).unwrap();
        let record = LeafMaterial { mix: 0.25, scale: 36.0 };
        for leaf_material in [Some(record), None] {
            let meta = ModelMeta {
                variant: rules::Variant::Shogi,
                encoder_version: ENCODER_VERSION,
                net: config.clone(),
                shape: encoder.net_shape(),
                step: 5,
                parameters: 0,
                created_unix_ms: 0,
                producer: String::new(),
                leaf_material,
            };
            let (bytes, _, written) = onnx_model(&net, &meta, Path::new("test.onnx")).unwrap();
            assert_eq!(written.leaf_material, leaf_material);
            let model = ModelProto::decode(bytes.as_slice()).unwrap();
            let value = model.metadata_props.iter().find(|p| p.key == LEAF_MATERIAL_KEY).map(|p| p.value.clone());
            let read = value.map(|v| serde_json::from_str::<LeafMaterial>(&v).unwrap());
            assert_eq!(read, leaf_material);
        }
    }
}
