//! `train.mix_records` and `train.mix_share`: a learner draws the records' share of every
//! minibatch from them, so what it learns moves toward their targets; records that are
//! not there stop it before it trains. Tiny network, CPU, seconds.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use common::learner::{chunk, options, tiny_config};
use dataio::run_layout::checkpoint_stem;
use dataio::{ChunkWriter, GameResult};
use model::encoding::Encoder;
use model::tch::Device;
use model::Expected;
use nn::EncoderLabels;
use rules::{Position, Variant};
use trainer::roles::files::RunFiles;
use trainer::{LearnerRole, TrainFileConfig};

const STEPS: u64 = 40;

/// The config, with `records` mixed in at half of each batch when given.
fn config(records: Option<&Path>) -> TrainFileConfig {
    let mix = records.map(|p| format!("mix_records = [{:?}]\nmix_share = 0.5\n", p)).unwrap_or_default();
    TrainFileConfig::from_toml(&tiny_config(&format!("policy_weight = 0.01\n{mix}")), "mix").unwrap()
}

/// Opens the learner of the run in `dir`, fed with chunks of won games.
fn learner(dir: &Path, cache: &Path, records: Option<&Path>) -> Result<LearnerRole, trainer::TrainError> {
    let files = RunFiles::open(dir.to_str().unwrap(), Some(cache)).unwrap();
    for seq in 0..STEPS {
        chunk(&files, "w1", seq, 8);
    }
    LearnerRole::open(files, Some(config(records)), options(STEPS))
}

/// Trains the run to its steps; the win probability its last network gives the start
/// position.
fn trained_start_win(dir: &Path, cache: &Path, records: Option<&Path>) -> f32 {
    let mut role = learner(dir, cache, records).unwrap();
    let stop = AtomicBool::new(false);
    let outcome = role.run(&stop);
    let step = role.finish(outcome).unwrap().step;
    assert_eq!(step, STEPS);
    let (net, _) = model::load_net(dir.join(checkpoint_stem(step)), &Expected::any(), Device::Cpu).unwrap();
    let encoder = Encoder::for_net(Variant::Shogi, net.config());
    let mut planes = vec![0f32; encoder.input_len()];
    encoder.encode(&Position::startpos(Variant::Shogi), &mut planes);
    let (_, wdl) = net.forward_host(&planes, 1).unwrap();
    let total: f32 = wdl.iter().map(|l| l.exp()).sum();
    wdl[0].exp() / total
}

/// The window holds won games only; records of the same positions lost, mixed in at half
/// of each batch, pull the network's value of the start position down to about even.
#[test]
fn the_records_mixed_in_pull_the_value_toward_their_results() {
    let records = tempfile::tempdir().unwrap();
    {
        let mut w = ChunkWriter::new(records.path(), "t", Variant::Shogi, &EncoderLabels, 8).unwrap();
        w.extend(common::game_samples(8, 3, |_| GameResult::Loss, [0.5, 0.3, 0.2])).unwrap();
    }
    let (plain, mixed, cache) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let window_alone = trained_start_win(plain.path(), cache.path(), None);
    let with_records = trained_start_win(mixed.path(), cache.path(), Some(records.path()));
    assert!(window_alone > 0.8, "won games alone: {window_alone}");
    assert!(with_records < 0.65, "half of each batch lost: {with_records} (won games alone: {window_alone})");
}

#[test]
fn records_that_are_not_there_stop_the_learner_before_its_first_checkpoint() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let missing = dir.path().join("no-teacher");
    let run = dir.path().join("run");
    let err = learner(&run, cache.path(), Some(&missing)).err().expect("refused");
    assert!(err.to_string().contains(&format!("{}: train.mix_records", missing.display())), "{err}");
    // Nothing of the run was checkpointed: the same command with the path fixed starts it afresh.
    assert!(!run.join("state.json").exists() && !run.join("checkpoints").exists());
}
