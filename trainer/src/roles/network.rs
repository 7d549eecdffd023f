//! Networks in a run: loading a checkpoint (the one place that reads weights), the
//! learner's checkpoints and the published models that workers follow.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use model::encoding::ENCODER_VERSION;
use model::tch::Device;
use model::{load_net, save_checkpoint, CheckpointInfo, Evaluator, Expected, LeafMaterial, ModelMeta, Net};
use model::{Precision, TorchEvaluator};

use super::files::RunFiles;
use super::state::RunState;
use crate::error::TrainError;
use crate::learning::net_trainer::NetTrainer as Learner;
use dataio::run_layout::{
    self as layout, checkpoint_files, checkpoint_stem, model_stem, stem_step, ModelPointer, MODELS,
};

/// Loads the trainable network of a checkpoint stem (a local path) onto `device`.
pub fn load_network(stem: &Path, expected: &Expected, device: Device) -> Result<(Net, ModelMeta), TrainError> {
    Ok(load_net(stem, expected, device)?)
}

/// An evaluator (inference copy) of `net` on `device` in `precision` (`[train] precision`).
pub fn evaluator_of(net: &Net, device: Device, precision: Precision) -> Result<Arc<dyn Evaluator>, TrainError> {
    Ok(Arc::new(TorchEvaluator::new(net, device, precision)?))
}

/// Reads and checks `models/latest.json` (it may only name a model of this run).
pub fn read_pointer(files: &RunFiles) -> Result<Option<ModelPointer>, TrainError> {
    let Some(bytes) = files.store.get(layout::LATEST_MODEL)? else { return Ok(None) };
    let path = format!("{}/{}", files.describe(), layout::LATEST_MODEL);
    Ok(Some(ModelPointer::parse(&bytes, &path)?))
}

/// The local stem of a checkpoint or model stem key, its weights and metadata downloaded
/// first for a remote run (weights before metadata, so a metadata file means both).
pub fn pull_network(files: &RunFiles, stem: &str) -> Result<PathBuf, TrainError> {
    for key in [format!("{stem}.safetensors"), format!("{stem}.json")] {
        if files.pull(&key)?.is_none() {
            return Err(TrainError::NetworkFileMissing { run: files.describe(), key });
        }
    }
    Ok(files.path(stem))
}

/// Writes the learner's checkpoint of its current step: optimiser state (with the raw
/// weights when the checkpoint holds their average) and learner state first, then the
/// playing network's weights ([`Learner::playing_net`]) and metadata (the checkpoint's commit record), uploaded in
/// that order for a remote run. `state` must already name this checkpoint. The metadata
/// records `leaf_material`, the run's search setting the network learned beside
/// ([`crate::TrainFileConfig::leaf_material`]).
pub fn save_learner_checkpoint(
    files: &RunFiles,
    learner: &Learner,
    state: &RunState,
    leaf_material: Option<LeafMaterial>,
) -> Result<(), TrainError> {
    let stem = checkpoint_stem(learner.step);
    let local = files.path(&stem);
    let dir = files.path(layout::CHECKPOINTS);
    std::fs::create_dir_all(&dir).map_err(|source| TrainError::Io { path: dir, source })?;
    learner.save_training_state(&local)?;
    store::write_local(&files.path(&format!("{stem}.learner")), &state.to_json())?;
    let info = CheckpointInfo {
        variant: state.variant.clone(),
        encoder_version: ENCODER_VERSION,
        step: learner.step,
        leaf_material,
    };
    save_checkpoint(learner.playing_net(), &local, &info)?;
    let [meta, weights, optim, learner_state] = checkpoint_files(&stem);
    for key in [optim, learner_state, weights, meta] {
        files.push(&key)?;
    }
    Ok(())
}

/// What [`publish_model`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Published {
    /// `models/latest.json` names the step now (it may have already).
    Step(u64),
    /// `models/latest.json` names this newer step, and keeps it: a published step never
    /// goes back (the workers would return to an older network).
    Newer(u64),
}

/// Attempts at replacing `models/latest.json` while others keep changing it.
const PUBLISH_ATTEMPTS: usize = 5;

/// Publishes checkpoint `step`'s network as `models/ckpt-<step>` and then points
/// `models/latest.json` at it, unless the pointer names a newer step. The pointer is
/// replaced with a conditional write of the version read, so that of two publishers the
/// older step never wins; a damaged pointer is replaced. Publishing the step the pointer
/// names already copies the checkpoint again.
pub fn publish_model(files: &RunFiles, step: u64) -> Result<Published, TrainError> {
    let (from, to) = (checkpoint_stem(step), model_stem(step));
    let mut copied = false;
    for _ in 0..PUBLISH_ATTEMPTS {
        let current = files.store.get_versioned(layout::LATEST_MODEL)?;
        let named = match current.as_ref().map(|v| ModelPointer::parse(&v.bytes, layout::LATEST_MODEL)) {
            Some(Ok(p)) if p.step > step => return Ok(Published::Newer(p.step)),
            Some(Ok(p)) => Some(p.step),
            Some(Err(e)) => {
                log::warn!("koma: {}: replacing a damaged pointer ({e})", files.describe());
                None
            }
            None => None,
        };
        if !copied {
            for ext in ["safetensors", "json"] {
                files.store.copy(&format!("{from}.{ext}"), &format!("{to}.{ext}"))?;
            }
            copied = true;
        }
        // A step published already has its copy refreshed (a run's last checkpoint is
        // rewritten with the mean of its weights, `train.swa_share`) and keeps the pointer.
        if named == Some(step) {
            return Ok(Published::Step(step));
        }
        let pointer = ModelPointer { step, model: to.clone() }.to_json();
        if files.store.put_if(layout::LATEST_MODEL, pointer, current.as_ref())?.is_some() {
            return Ok(Published::Step(step));
        }
    }
    Err(TrainError::PublishContended { run: files.describe(), step })
}

/// The steps of the checkpoints (`checkpoints`) or models (`models`) in the run whose
/// metadata is written (so the weights are complete), oldest first.
pub fn saved_steps(files: &RunFiles, folder: &str) -> Result<Vec<u64>, TrainError> {
    let entries = files.store.list(folder)?;
    let mut steps: Vec<u64> =
        entries.iter().filter_map(|e| e.key.strip_suffix(".json")).filter_map(|s| stem_step(s, folder)).collect();
    steps.sort_unstable();
    Ok(steps)
}

/// Deletes all but the newest `keep` checkpoints and models (never `protect`, the
/// `previous` evaluation baseline, nor the model `latest.json` names). Metadata goes
/// first: without it the rest is never picked up.
pub fn prune(files: &RunFiles, keep: usize, protect: Option<&str>) -> Result<(), TrainError> {
    if keep == 0 {
        return Ok(());
    }
    let protect_step = protect.and_then(|p| stem_step(p, layout::CHECKPOINTS));
    for folder in [layout::CHECKPOINTS, MODELS] {
        let steps = saved_steps(files, folder)?;
        let old = steps.len().saturating_sub(keep);
        for &step in steps[..old].iter().filter(|&&s| Some(s) != protect_step) {
            let stem = layout::stem_in(folder, step);
            for key in checkpoint_files(&stem) {
                files.store.delete(&key)?;
                let _ = std::fs::remove_file(files.path(&key));
            }
        }
    }
    Ok(())
}
