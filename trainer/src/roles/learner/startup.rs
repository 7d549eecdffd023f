//! The learner's start-up: the run's lease (one learner per run), the config it runs
//! with, the state it starts from (a new run or the newest complete checkpoint), its device, the network with its optimiser state,
//! the replay window (of the size for the samples generated so far), and on a resume
//! the window refilled from the chunks the state took in.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use model::encoding::Encoder;
use model::tch::Device;
use model::{load_net, parse_device, Expected, Net};

use crate::config::{ConfigError, LrSchedule, TrainConfig, TrainFileConfig};
use crate::data::{Loader, PolicyTargets, RecordMix, Replay, ReplayWindow, Sources, ValueSchedule};
use crate::error::TrainError;
use crate::learning::net_trainer::NetTrainer;
use crate::roles::display::Display;
use crate::roles::files::RunFiles;
use crate::roles::intake::refill_window;
use crate::roles::network::{load_network, pull_network};
use crate::roles::state::RunState;
use crate::supervised::datasets::read_training_inputs;
use dataio::run_layout as layout;
use store::lease::{KeptLease, Lease, LeaseError, LEASE_TTL, RENEW_EVERY};

fn clock_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1
}

/// Takes the run's lease (`learner.lease`), waiting up to `wait` (or until `stop`) while
/// another learner holds it; then keeps it renewed until it is dropped.
pub(super) fn take_lease(
    files: &RunFiles,
    wait: Duration,
    stop: &AtomicBool,
    display: &Display,
) -> Result<KeptLease, TrainError> {
    let until = Instant::now() + wait;
    let mut told = false;
    loop {
        match Lease::acquire(&files.store, layout::LEARNER_LEASE, LEASE_TTL) {
            Ok(lease) => {
                if let Some(old) = &lease.taken_over {
                    display.warn(&format!(
                        "koma: taking over {} from learner {} (pid {} on {}): its lease had expired or its process is gone",
                        files.describe(),
                        old.owner,
                        old.pid,
                        old.host
                    ));
                }
                return Ok(KeptLease::keep(lease, RENEW_EVERY));
            }
            Err(e @ LeaseError::Held { .. }) if Instant::now() < until && !stop.load(Ordering::SeqCst) => {
                if !told {
                    display.warn(&format!("koma: waiting for the run's lease: {e}"));
                    told = true;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The `[train]` table with the command line's limits, checked like the file's.
pub(crate) fn with_limits(
    train: &TrainConfig,
    max_minutes: Option<f64>,
    max_steps: Option<u64>,
) -> Result<TrainConfig, TrainError> {
    let mut tcfg = train.clone();
    tcfg.max_minutes = max_minutes.unwrap_or(tcfg.max_minutes);
    tcfg.max_steps = max_steps.unwrap_or(tcfg.max_steps);
    tcfg.validate().map_err(|e| ConfigError::Invalid { path: "command line".into(), message: e.to_string() })?;
    // Settings that act over the run's budget need one.
    let unbounded = tcfg.max_steps == 0 && tcfg.max_minutes <= 0.0;
    let over_the_budget = [
        (
            tcfg.lr_schedule == LrSchedule::Cosine,
            "train.lr_schedule = \"cosine\" decays over".to_string(),
            "use lr_schedule = \"constant\"",
        ),
        (tcfg.swa_share > 0.0, format!("train.swa_share = {} averages the end of", tcfg.swa_share), "swa_share = 0"),
    ];
    if let Some((_, what, instead)) = over_the_budget.into_iter().find(|(on, _, _)| unbounded && *on) {
        let message = format!("{what} max_steps or max_minutes, and both are 0 (no limit): set one, or {instead}");
        return Err(ConfigError::Invalid { path: "command line".into(), message }.into());
    }
    Ok(tcfg)
}

/// The config stored in the run.
pub(super) fn run_config(files: &RunFiles) -> Result<TrainFileConfig, TrainError> {
    let place = format!("{}/{}", files.describe(), layout::CONFIG);
    let Some(bytes) = files.store.get(layout::CONFIG)? else { return Err(TrainError::NoRunConfig { place }) };
    let Ok(text) = String::from_utf8(bytes) else { return Err(TrainError::RunConfigNotUtf8 { place }) };
    Ok(TrainFileConfig::from_toml(&text, &place)?)
}

/// The learner state to start from: the prior one, counted as a resume, or a new one.
pub(super) fn start_state(prior: Option<RunState>, cfg: &TrainFileConfig, name: &str) -> Result<RunState, TrainError> {
    let variant = cfg.base.variant.name();
    let state = match prior {
        Some(mut s) => {
            s.resumes += 1;
            s
        }
        None => {
            let ls = if cfg.train.seed != 0 { cfg.train.seed } else { clock_seed() };
            let ss = if cfg.base.selfplay.seed != 0 { cfg.base.selfplay.seed } else { clock_seed() ^ 0x5eed };
            RunState::fresh(variant, ls, ss)
        }
    };
    if state.variant != variant {
        return Err(TrainError::VariantMismatch {
            run: name.to_string(),
            run_variant: state.variant.clone(),
            config_variant: variant.to_string(),
        });
    }
    Ok(state)
}

/// The seed of this session's minibatches and evaluations: another one after each resume.
pub(super) fn session_seed(state: &RunState) -> u64 {
    state.learner_seed ^ (state.resumes as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The learner's device: `train.device`, else the self-play device.
pub(super) fn learner_device(cfg: &TrainFileConfig) -> Result<Device, TrainError> {
    let sp = parse_device(&cfg.base.selfplay.device)?;
    let device = if cfg.train.device.trim().is_empty() { sp } else { parse_device(&cfg.train.device)? };
    if device == Device::Cpu || sp == Device::Cpu {
        model::set_torch_threads(cfg.base.selfplay.torch_threads, model::CpuShare::HalfOfSmall);
    }
    Ok(device)
}

/// A fresh network (or the `init` network), or the one of the checkpoint `state` names
/// with its optimiser state.
pub(super) fn build_trainer(
    files: &RunFiles,
    cfg: &TrainFileConfig,
    tcfg: &TrainConfig,
    state: &RunState,
    init: Option<&Path>,
    device: Device,
    display: &Display,
) -> Result<NetTrainer, TrainError> {
    let variant = cfg.base.variant;
    let shape = Encoder::for_net(variant, &cfg.base.model).net_shape();
    let expected = Expected::variant(variant).with_shape(shape);
    if state.checkpoint.is_empty() {
        let net = match init {
            Some(p) => load_net(p, &expected, device)?.0,
            None => Net::new(&cfg.base.model, shape, state.learner_seed, device)?,
        };
        return Ok(NetTrainer::new(net, tcfg, 0));
    }
    let stem = pull_network(files, &state.checkpoint)?;
    let _ = files.pull(&format!("{}.optim.safetensors", state.checkpoint))?;
    let (net, meta) = load_network(&stem, &expected, device)?;
    if meta.net != cfg.base.model {
        display.println(&format!(
            "koma train: note: the config's [model] differs from the checkpoint's; keeping the checkpoint's ({} blocks x {} channels)",
            meta.net.blocks, meta.net.channels
        ));
    }
    if meta.step != state.step {
        return Err(TrainError::CheckpointStep { stem, checkpoint_step: meta.step, state_step: state.step });
    }
    let mut trainer = NetTrainer::new(net, tcfg, state.step);
    if !trainer.load_training_state(&stem)? {
        display.println("koma train: note: optimiser changed since the checkpoint; its state starts fresh");
    }
    Ok(trainer)
}

/// The replay window of a run whose state is `state`: empty, of the size for the samples
/// the run generated so far (a window that grows with the run starts where it was).
pub(super) fn replay_window(tcfg: &TrainConfig, state: &RunState) -> Replay {
    let mut replay = Replay::with_window(ReplayWindow::from_config(tcfg));
    replay.grow_to(state.samples_generated);
    replay
}

/// A resumed run's window: the samples of the chunks its state took in. `stop` ends the
/// refill of a large window early.
pub(super) fn refill(
    files: &RunFiles,
    state: &RunState,
    replay: &Arc<Mutex<Replay>>,
    cfg: &TrainFileConfig,
    stop: &AtomicBool,
    name: &str,
    display: &Display,
) -> Result<(), TrainError> {
    let loaded = refill_window(files, state, replay, cfg.base.variant, stop)?;
    display.warn(&format!(
        "koma: resuming run `{name}` at step {} ({} chunks taken in, {loaded} samples in the replay window)",
        state.step,
        state.chunks.len(),
    ));
    Ok(())
}

/// The encoder of the learner's minibatches (the network's planes).
pub(super) fn batch_encoder(trainer: &NetTrainer, cfg: &TrainFileConfig) -> Encoder {
    Encoder::for_net(cfg.base.variant, trainer.net.config())
}

/// The loader thread that encodes shuffled minibatches of `sources` ahead of the steps.
pub(super) fn spawn_loader(
    sources: Sources,
    encoder: Encoder,
    trainer: &NetTrainer,
    tcfg: &TrainConfig,
    seed: u64,
) -> Loader {
    // On a GPU the dense policy targets are made on the device from sparse pairs.
    let targets = if trainer.device().is_cuda() { PolicyTargets::Sparse } else { PolicyTargets::Dense };
    Loader::spawn(
        sources,
        encoder,
        tcfg.batch_size,
        tcfg.prefetch,
        ValueSchedule::from_config(tcfg, trainer.step),
        seed,
        targets,
    )
}

/// The records `train.mix_share` mixes in, when it asks for any.
pub(super) fn record_mix(
    tcfg: &TrainConfig,
    encoder: &Encoder,
    display: &Display,
) -> Result<Option<Arc<RecordMix>>, TrainError> {
    if tcfg.mix_share > 0.0 {
        Ok(Some(Arc::new(load_record_mix(tcfg, encoder, display)?)))
    } else {
        Ok(None)
    }
}

/// The samples of `train.mix_records`; the problems met reading them are reported, and
/// records without a sample are an error.
fn load_record_mix(tcfg: &TrainConfig, encoder: &Encoder, display: &Display) -> Result<RecordMix, TrainError> {
    if let Some(missing) = tcfg.mix_records.iter().find(|p| !p.exists()) {
        let source =
            std::io::Error::new(std::io::ErrorKind::NotFound, "train.mix_records names no such file or folder");
        return Err(TrainError::Io { path: missing.clone(), source });
    }
    let inputs = read_training_inputs(&tcfg.mix_records, encoder.variant(), encoder);
    for p in inputs.problems.iter().take(5) {
        display.warn(&format!("koma: train.mix_records: {p}"));
    }
    let samples: Vec<_> = inputs.groups.into_iter().flatten().collect();
    if samples.is_empty() {
        let first_problem = inputs.problems.first().cloned();
        return Err(TrainError::NoGames { inputs: tcfg.mix_records.clone(), first_problem });
    }
    display.warn(&format!(
        "koma: {} samples of {:?} mixed in, {:.0}% of each batch (train.mix_share)",
        samples.len(),
        tcfg.mix_records,
        100.0 * tcfg.mix_share
    ));
    Ok(RecordMix::new(samples, tcfg.mix_share))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{encode_batch, ValueTargets};
    use crate::roles::network::save_learner_checkpoint;
    use dataio::run_layout::checkpoint_stem;
    use dataio::{GameResult, Sample};
    use rules::{Position, Variant};

    fn weights(net: &Net) -> Vec<(String, Vec<f32>)> {
        let mut v: Vec<_> = net
            .var_store()
            .variables()
            .into_iter()
            .map(|(n, t)| (n, Vec::<f32>::try_from(t.to_kind(model::tch::Kind::Float).flatten(0, -1)).unwrap()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// `train.ema_decay`: the learner's checkpoint holds the average, and a resumed
    /// learner trains on the raw weights with the average where it was.
    #[test]
    fn a_resumed_learner_has_the_raw_weights_and_the_average() {
        let text = "[model]\nblocks = 1\nchannels = 8\nvalue_channels = 2\nvalue_hidden = 8\n\
                    [search]\nleaf_material_mix = 0.5\nleaf_material_scale = 36\n\
                    [train]\noptimizer = \"adamw\"\nlr = 0.01\nwarmup_steps = 0\nema_decay = 0.9\n";
        let cfg = TrainFileConfig::from_toml(text, "t").unwrap();
        let cache = tempfile::tempdir().unwrap();
        let files = RunFiles::open("memory://ema-resume", Some(cache.path())).unwrap();
        let display = Display::new(false);
        let mut state = RunState::fresh("shogi", 1, 2);
        let mut trainer = build_trainer(&files, &cfg, &cfg.train, &state, None, Device::Cpu, &display).unwrap();
        let encoder = Encoder::for_net(Variant::Shogi, &cfg.base.model);
        let start = Position::startpos(Variant::Shogi);
        let samples: Vec<Sample> = encoder.legal_move_indices(&start)[..8]
            .iter()
            .map(|&m| Sample {
                sfen: start.to_sfen(),
                repetitions: 0,
                policy: vec![(m as u32, 1.0)],
                result: Some(GameResult::Win),
                root_wdl: [0.5, 0.5, 0.0],
                plies_left: 10,
                full_search: true,
                aux: Default::default(),
            })
            .collect();
        let batch = encode_batch(&encoder, &samples, ValueTargets::RESULT);
        for _ in 0..3 {
            trainer.train_step(&batch).unwrap();
        }
        (state.step, state.checkpoint) = (trainer.step, checkpoint_stem(trainer.step));
        save_learner_checkpoint(&files, &trainer, &state, cfg.leaf_material()).unwrap();
        let (saved, meta) = model::load_net(files.path(&state.checkpoint), &Expected::any(), Device::Cpu).unwrap();
        // The run's search setting travels with the network.
        assert_eq!(meta.leaf_material, Some(model::LeafMaterial { mix: 0.5, scale: 36.0 }));
        assert_eq!(weights(&saved), weights(trainer.playing_net()), "the checkpoint holds the average");
        assert_ne!(weights(&saved), weights(&trainer.net));
        let resumed = build_trainer(&files, &cfg, &cfg.train, &state, None, Device::Cpu, &display).unwrap();
        assert_eq!(resumed.step, 3);
        assert_eq!(weights(&resumed.net), weights(&trainer.net), "raw weights");
        assert_eq!(weights(resumed.playing_net()), weights(trainer.playing_net()), "average");
    }

    /// A window that grows with the run starts, on a resume, at the size for the samples
    /// the run generated (so the refill reads that many).
    #[test]
    fn the_window_starts_at_the_size_for_the_samples_generated() {
        let tcfg = TrainConfig {
            replay_window: 1000,
            replay_window_alpha: 1.0,
            replay_window_beta: 0.5,
            ..Default::default()
        };
        let state = RunState { samples_generated: 3000, ..RunState::fresh("shogi", 1, 2) };
        assert_eq!(replay_window(&tcfg, &state).capacity(), 2000);
        let fixed = TrainConfig { replay_window: 1000, ..Default::default() };
        assert_eq!(replay_window(&fixed, &state).capacity(), 1000);
    }

    /// `train.mix_records`: every sample of the chunks named is loaded; records without
    /// a sample (an empty folder) or a path that is not there stop the learner with an
    /// error naming them.
    #[test]
    fn the_records_to_mix_in_are_loaded_whole_or_refused() {
        use dataio::ChunkWriter;
        use nn::EncoderLabels;
        let encoder = Encoder::new(Variant::Shogi);
        let dir = tempfile::tempdir().unwrap();
        let legal = encoder.legal_move_indices(&Position::startpos(Variant::Shogi));
        {
            let mut w = ChunkWriter::new(dir.path(), "t", Variant::Shogi, &EncoderLabels, 4).unwrap();
            w.extend((0..10).map(|i| Sample {
                sfen: Position::startpos(Variant::Shogi).to_sfen(),
                repetitions: 0,
                policy: vec![(legal[i] as u32, 1.0)],
                result: Some(GameResult::Loss),
                root_wdl: [0.2, 0.1, 0.7],
                plies_left: 10,
                full_search: true,
                aux: Default::default(),
            }))
            .unwrap();
        }
        let display = Display::new(false);
        let tcfg = TrainConfig { mix_share: 0.25, mix_records: vec![dir.path().to_path_buf()], ..Default::default() };
        let mix = load_record_mix(&tcfg, &encoder, &display).unwrap();
        assert_eq!((mix.len(), mix.count(128)), (10, 32));
        let empty = tempfile::tempdir().unwrap();
        let tcfg_empty = TrainConfig { mix_records: vec![empty.path().to_path_buf()], ..tcfg.clone() };
        let err = load_record_mix(&tcfg_empty, &encoder, &display).unwrap_err();
        assert!(matches!(err, TrainError::NoGames { .. }), "{err}");
        assert!(err.to_string().contains(&empty.path().display().to_string()), "{err}");
        let missing = dir.path().join("missing");
        let tcfg_missing = TrainConfig { mix_records: vec![dir.path().to_path_buf(), missing.clone()], ..tcfg };
        let err = load_record_mix(&tcfg_missing, &encoder, &display).unwrap_err();
        assert!(matches!(err, TrainError::Io { .. }), "{err}");
        assert!(err.to_string().contains(&format!("{}: train.mix_records names no such", missing.display())), "{err}");
    }

    #[test]
    fn a_cosine_learning_rate_and_swa_need_a_budget() {
        let cosine =
            TrainConfig { lr_schedule: LrSchedule::Cosine, max_steps: 0, max_minutes: 0.0, ..Default::default() };
        let err = with_limits(&cosine, None, None).unwrap_err().to_string();
        assert!(err.contains("max_steps or max_minutes"), "{err}");
        assert!(with_limits(&cosine, Some(25.0), None).is_ok());
        assert!(with_limits(&cosine, None, Some(1_000)).is_ok());
        let constant = TrainConfig { max_steps: 0, max_minutes: 0.0, ..Default::default() };
        assert!(with_limits(&constant, None, None).is_ok());
        let swa = TrainConfig { swa_share: 0.15, ..constant };
        let err = with_limits(&swa, None, None).unwrap_err().to_string();
        assert!(err.contains("train.swa_share") && err.contains("max_steps or max_minutes"), "{err}");
        assert!(with_limits(&swa, Some(25.0), None).is_ok());
    }
}
