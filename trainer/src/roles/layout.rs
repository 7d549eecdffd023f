//! Names of a run's objects (the layout is documented in `data/FORMAT.md`, "Runs").
//!
//! ```text
//! config.toml                          the run's config (the learner writes it; workers read it)
//! state.json                           the learner's commit record (written last)
//! checkpoints/ckpt-<step>.json / .safetensors / .optim.safetensors / .learner
//! models/ckpt-<step>.json / .safetensors   published networks
//! models/latest.json                   pointer to the newest published network (written last)
//! samples/<worker-id>-<unique>.chunk   immutable sample chunks
//! workers/<worker-id>.json             each worker's latest throughput report
//! tb/, eval.jsonl                      TensorBoard scalars, evaluation results
//! ```

pub const CONFIG: &str = "config.toml";
pub const STATE: &str = "state.json";
pub const CHECKPOINTS: &str = "checkpoints";
pub const MODELS: &str = "models";
pub const LATEST_MODEL: &str = "models/latest.json";
pub const SAMPLES: &str = "samples";
pub const WORKERS: &str = "workers";
pub const TB: &str = "tb";
pub const EVAL_LOG: &str = "eval.jsonl";

/// `checkpoints/ckpt-<step>` (no extension).
pub fn checkpoint_stem(step: u64) -> String {
    format!("{CHECKPOINTS}/ckpt-{step:08}")
}

/// `models/ckpt-<step>` (no extension): the published copy of that checkpoint's network.
pub fn model_stem(step: u64) -> String {
    format!("{MODELS}/ckpt-{step:08}")
}

/// The step of a stem `checkpoints/ckpt-<digits>` or `models/ckpt-<digits>`; `None` for
/// anything else. Names read from `state.json` or `latest.json` must pass this, so that
/// they can only name files inside the run.
pub fn stem_step(stem: &str, folder: &str) -> Option<u64> {
    let digits = stem.strip_prefix(folder)?.strip_prefix("/ckpt-")?;
    if digits.len() < 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The files of a checkpoint stem: metadata (the checkpoint's commit record), weights,
/// optimiser state, learner state.
pub fn checkpoint_files(stem: &str) -> [String; 4] {
    [
        format!("{stem}.json"),
        format!("{stem}.safetensors"),
        format!("{stem}.optim.safetensors"),
        format!("{stem}.learner"),
    ]
}

/// A worker id: letters, digits, `_` and `.`, and `-` inside (at most 64 bytes), so that
/// it is a safe file name and the chunk name splits back into id and unique part.
pub fn valid_worker_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && !id.starts_with(['-', '.'])
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// `samples/<worker-id>-<millis:013>-<nonce:08x>-<seq:06>.chunk`: unique without
/// coordination (the millisecond of the worker's start, a random nonce, a counter).
pub fn chunk_key(worker_id: &str, start_ms: u64, nonce: u32, seq: u64) -> String {
    format!("{SAMPLES}/{worker_id}-{start_ms:013}-{nonce:08x}-{seq:06}.chunk")
}

/// The worker id of a chunk's file name (what precedes its last three `-` fields).
pub fn chunk_worker(name: &str) -> &str {
    let stem = name.strip_suffix(".chunk").unwrap_or(name);
    let mut parts = stem.rsplitn(4, '-');
    let (_, _, _) = (parts.next(), parts.next(), parts.next());
    parts.next().unwrap_or(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_stay_inside_the_run() {
        assert_eq!(checkpoint_stem(12), "checkpoints/ckpt-00000012");
        assert_eq!(stem_step("checkpoints/ckpt-00000012", CHECKPOINTS), Some(12));
        assert_eq!(stem_step("models/ckpt-00000012", MODELS), Some(12));
        for bad in ["../x/ckpt-00000001", "/etc/ckpt-00000001", "checkpoints/ckpt-1", "checkpoints/../ckpt-00000001"] {
            assert_eq!(stem_step(bad, CHECKPOINTS), None, "{bad}");
        }
        let key = chunk_key("gpu-node-3", 1_700_000_000_000, 0xabc, 7);
        assert_eq!(key, "samples/gpu-node-3-1700000000000-00000abc-000007.chunk");
        assert_eq!(chunk_worker(key.strip_prefix("samples/").unwrap()), "gpu-node-3");
        assert_eq!(chunk_worker("sp-1700000000-4242-000003.chunk"), "sp");
        assert!(valid_worker_id("w1") && valid_worker_id("host-1.gpu_0"));
        assert!(!valid_worker_id("") && !valid_worker_id("a/b") && !valid_worker_id("-x") && !valid_worker_id("a b"));
    }
}
