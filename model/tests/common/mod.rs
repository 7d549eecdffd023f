#![allow(dead_code)]

use koma_model::{NetConfig, NetShape};

/// A tiny shape: 9x9 board, few planes, so tests run in milliseconds on a CPU.
pub fn tiny_shape() -> NetShape {
    NetShape { input_planes: 6, board_height: 9, board_width: 9, policy_planes: 5 }
}

/// A tiny network that exercises every layer kind (global pooling, non-zero residuals).
pub fn tiny_config() -> NetConfig {
    NetConfig {
        blocks: 3,
        channels: 8,
        global_pooling_every: 2,
        global_pooling_channels: 4,
        policy_channels: Some(6),
        value_channels: 2,
        value_hidden: 16,
        zero_init_residual: false,
        attack_planes: false,
        reply_policy_head: false,
        material_head: false,
    }
}

/// Deterministic pseudo-random inputs in [0, 1).
pub fn random_inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Moves the batch norm running statistics away from their initial (0, 1) so that tests
/// of inference paths (batch norm folding, checkpoints) are meaningful.
pub fn train_bn_stats(net: &koma_model::Net, seed: u64) {
    let s = net.shape();
    for k in 0..3 {
        let x = random_inputs(16 * s.input_len(), seed + k);
        let xs =
            tch::Tensor::from_slice(&x).view([16, s.input_planes as i64, s.board_height as i64, s.board_width as i64]);
        let xs = (xs * 3.0) - 0.5;
        tch::no_grad(|| {
            let _ = net.forward_t(&xs, true);
        });
    }
}

/// The shape of the standard shogi encoder (default options): what [`tiny_config`]
/// networks have in the loader tests, which check the shape against the encoder.
pub fn shogi_shape() -> NetShape {
    koma_model::encoding::Encoder::new(rules::Variant::Shogi).net_shape()
}

pub fn shogi_info(step: u64) -> koma_model::CheckpointInfo {
    koma_model::CheckpointInfo {
        variant: "shogi".into(),
        encoder_version: koma_model::encoding::ENCODER_VERSION,
        step,
        leaf_material: None,
    }
}

/// A tiny standard shogi network with trained batch norm statistics, saved as a
/// checkpoint pair at `stem`.
pub fn save_shogi_checkpoint(
    stem: &std::path::Path,
    seed: u64,
    step: u64,
) -> (koma_model::Net, koma_model::CheckpointPaths) {
    let net = koma_model::Net::new(&tiny_config(), shogi_shape(), seed, tch::Device::Cpu).unwrap();
    train_bn_stats(&net, 77 + seed);
    let (paths, meta) = koma_model::save_checkpoint(&net, stem, &shogi_info(step)).unwrap();
    assert_eq!(meta.step, step);
    (net, paths)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

pub fn edit_meta(paths: &koma_model::CheckpointPaths, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&paths.meta).unwrap()).unwrap();
    edit(&mut meta);
    std::fs::write(&paths.meta, serde_json::to_vec(&meta).unwrap()).unwrap();
}

/// A safetensors file's tensors (name, shape, bytes) and header metadata.
pub type Tensors = Vec<(String, Vec<usize>, Vec<u8>)>;

pub fn read_tensors(path: &std::path::Path) -> (Tensors, Option<std::collections::HashMap<String, String>>) {
    use safetensors::tensor::SafeTensors;
    let bytes = std::fs::read(path).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let tensors = st.tensors().into_iter().map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec())).collect();
    (tensors, header.metadata().clone())
}

pub fn write_tensors(
    path: &std::path::Path,
    tensors: &Tensors,
    metadata: &Option<std::collections::HashMap<String, String>>,
) -> Vec<u8> {
    use safetensors::tensor::{Dtype, TensorView};
    let views: Vec<_> =
        tensors.iter().map(|(n, s, d)| (n.clone(), TensorView::new(Dtype::F32, s.clone(), d).unwrap())).collect();
    let out = safetensors::serialize(views, metadata).unwrap();
    std::fs::write(path, &out).unwrap();
    out
}

/// Rewrites a checkpoint's weights file with `edit` applied to its tensors, and fixes the
/// metadata's size and checksum so that only the tensor-level checks can catch the change.
pub fn rewrite_weights(paths: &koma_model::CheckpointPaths, edit: impl FnOnce(&mut Tensors)) {
    let (mut tensors, metadata) = read_tensors(&paths.weights);
    edit(&mut tensors);
    let out = write_tensors(&paths.weights, &tensors, &metadata);
    edit_meta(paths, |m| {
        m["weights_bytes"] = out.len().into();
        m["weights_sha256"] = sha256_hex(&out).into();
    });
}

/// An error and its sources joined by ": ", as `anyhow` prints them with `{:#}`.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text += &format!(": {c}");
        cause = c.source();
    }
    text
}

/// Both networks give bit-identical outputs on one pseudo-random position.
pub fn assert_same_outputs(a: &koma_model::Net, b: &koma_model::Net, seed: u64) {
    let x = random_inputs(a.shape().input_len(), seed);
    assert_eq!(a.forward_host(&x, 1).unwrap(), b.forward_host(&x, 1).unwrap());
}

/// SplitMix64: small, seeded, good enough to pick moves and mutations in tests.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}
