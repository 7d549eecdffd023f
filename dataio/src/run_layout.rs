//! The layout of a training run: the names of its objects (documented in
//! `data/FORMAT.md`, "Runs") and its pointer to the newest published network.
//!
//! ```text
//! config.toml                          the run's config (the learner writes it; workers read it)
//! learner.lease                        who the run's one learner is, until when (store::lease)
//! state.json                           the learner's commit record (written last)
//! checkpoints/ckpt-<step>.json / .safetensors / .optim.safetensors / .learner
//! models/ckpt-<step>.json / .safetensors   published networks
//! models/latest.json                   pointer to the newest published network (written last)
//! samples/<worker-id>-<unique>.chunk   immutable sample chunks
//! workers/<worker-id>.json             each worker's latest throughput report
//! tb/, eval.jsonl                      TensorBoard scalars, evaluation results
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const CONFIG: &str = "config.toml";
pub const STATE: &str = "state.json";
/// The lease of the run's one learner (`store::lease`).
pub const LEARNER_LEASE: &str = "learner.lease";
pub const CHECKPOINTS: &str = "checkpoints";
pub const MODELS: &str = "models";
pub const LATEST_MODEL: &str = "models/latest.json";
pub const SAMPLES: &str = "samples";
pub const WORKERS: &str = "workers";
pub const TB: &str = "tb";
pub const EVAL_LOG: &str = "eval.jsonl";

/// `ckpt-<step:08>`: the file stem of the checkpoint of `step` (in `checkpoints/`, and
/// its published copy in `models/`; `koma learn` writes the same names).
pub fn checkpoint_name(step: u64) -> String {
    format!("ckpt-{step:08}")
}

/// `checkpoints/ckpt-<step>` (no extension).
pub fn checkpoint_stem(step: u64) -> String {
    format!("{CHECKPOINTS}/{}", checkpoint_name(step))
}

/// `models/ckpt-<step>` (no extension): the published copy of that checkpoint's network.
pub fn model_stem(step: u64) -> String {
    format!("{MODELS}/{}", checkpoint_name(step))
}

/// `<folder>/ckpt-<step>` (no extension) for `folder` [`CHECKPOINTS`] or [`MODELS`].
pub fn stem_in(folder: &str, step: u64) -> String {
    format!("{folder}/{}", checkpoint_name(step))
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

/// `models/latest.json`: the newest published network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPointer {
    pub step: u64,
    /// `models/ckpt-<step>` (no extension).
    pub model: String,
}

/// A `models/latest.json` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PointerError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Syntax { path: String, message: String },
    #[error("{LATEST_MODEL}: `{model}` is not a model of this run")]
    Foreign { model: String },
    #[error("{LATEST_MODEL}: says step {step} but names `{model}`, the model of step {model_step}")]
    StepMismatch { step: u64, model: String, model_step: u64 },
}

impl ModelPointer {
    /// The pointer to the published network of `step`.
    pub fn to_step(step: u64) -> ModelPointer {
        ModelPointer { step, model: model_stem(step) }
    }

    /// Parses and checks a pointer: it may only name `models/ckpt-<step>` of its own step,
    /// so that it can only name files inside the run. `path` names it in errors.
    pub fn parse(bytes: &[u8], path: &str) -> Result<ModelPointer, PointerError> {
        let p: ModelPointer = serde_json::from_slice(bytes)
            .map_err(|e| PointerError::Syntax { path: path.to_string(), message: e.to_string() })?;
        match stem_step(&p.model, MODELS) {
            None => return Err(PointerError::Foreign { model: p.model }),
            Some(model_step) if model_step != p.step => {
                return Err(PointerError::StepMismatch { step: p.step, model: p.model, model_step })
            }
            Some(_) => {}
        }
        Ok(p)
    }

    /// The pointer as the JSON that `models/latest.json` holds.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("a model pointer serialises")
    }
}

/// The published network of the run in folder `run`: the metadata file
/// (`<run>/models/ckpt-<step>.json`) that `models/latest.json` names; `None` when the run
/// has published none.
pub fn published_model(run: &Path) -> Result<Option<PathBuf>, PointerError> {
    let path = run.join(LATEST_MODEL);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PointerError::Io { path, source }),
    };
    let pointer = ModelPointer::parse(&bytes, &path.display().to_string())?;
    Ok(Some(run.join(format!("{}.json", pointer.model))))
}

/// The newest checkpoint (by step) in the run folder `run`: its metadata file
/// (`<run>/checkpoints/ckpt-<step>.json`); for runs that publish no network (`koma learn`).
pub fn newest_checkpoint(run: &Path) -> Option<PathBuf> {
    let rd = std::fs::read_dir(run.join(CHECKPOINTS)).ok()?;
    let step_of = |name: &str| stem_step(&format!("{CHECKPOINTS}/{}", name.strip_suffix(".json")?), CHECKPOINTS);
    let newest = rd.flatten().filter_map(|f| step_of(&f.file_name().to_string_lossy())).max()?;
    Some(run.join(format!("{}.json", checkpoint_stem(newest))))
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

    #[test]
    fn the_pointer_names_a_model_of_its_run() {
        let p = ModelPointer::to_step(12);
        assert_eq!(p.model, "models/ckpt-00000012");
        assert_eq!(ModelPointer::parse(&p.to_json(), "x").unwrap(), p);
        let foreign = br#"{"step": 12, "model": "../other/models/ckpt-00000012"}"#;
        let e = ModelPointer::parse(foreign, "x").unwrap_err();
        assert_eq!(e.to_string(), "models/latest.json: `../other/models/ckpt-00000012` is not a model of this run");
        let e = ModelPointer::parse(br#"{"step": 12, "model": "models/ckpt-00000011"}"#, "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "models/latest.json: says step 12 but names `models/ckpt-00000011`, the model of step 11"
        );
        assert!(ModelPointer::parse(b"{}", "r/models/latest.json")
            .unwrap_err()
            .to_string()
            .starts_with("r/models/latest.json: "));
    }

    #[test]
    fn a_run_folder_names_its_published_model_and_newest_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path();
        assert_eq!(published_model(run).unwrap(), None);
        assert_eq!(newest_checkpoint(run), None);
        std::fs::create_dir_all(run.join(CHECKPOINTS)).unwrap();
        for name in ["ckpt-00000002.json", "ckpt-00000010.json", "ckpt-00000011.safetensors", "ckpt-7.json", ".x.json"]
        {
            std::fs::write(run.join(CHECKPOINTS).join(name), "{}").unwrap();
        }
        assert_eq!(newest_checkpoint(run), Some(run.join("checkpoints/ckpt-00000010.json")));
        std::fs::create_dir_all(run.join(MODELS)).unwrap();
        std::fs::write(run.join(LATEST_MODEL), ModelPointer::to_step(2).to_json()).unwrap();
        assert_eq!(published_model(run).unwrap(), Some(run.join("models/ckpt-00000002.json")));
        std::fs::write(run.join(LATEST_MODEL), b"{\"step\": 2}").unwrap();
        assert!(published_model(run).is_err());
    }
}
