//! One search for every player: the engine (`usi::engine::Core`, what `koma-usi` runs)
//! and the arena's koma player (what `koma arena` and the trainer's evaluation play),
//! given the same network, position and one thread, make the same move with the same
//! root visit counts, also on the next move, where both reuse their tree.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use arena::koma_player::{KomaConfig, KomaNetwork, KomaPlayer};
use arena::player::{Action, GoRequest, Player};
use arena::TimeControl;
use model::encoding::Encoder;
use model::tch::Device;
use model::{ModelMeta, Net, NetConfig};
use rules::{Move, Position, Variant};
use search::{ChildInfo, Limits, SearchOutcome};
use usi::engine::Core;

const NODES: u64 = 300;
const BATCH: usize = 8;

/// The leaf material setting the network file records.
const LEAF_MATERIAL: model::LeafMaterial = model::LeafMaterial { mix: 0.5, scale: 36.0 };

/// A tiny network with random weights drawn from `seed`, written as a model file.
fn random_model(dir: &Path, seed: u64) -> PathBuf {
    model::tch::set_num_threads(1);
    let cfg = NetConfig::tiny();
    let shape = Encoder::for_net(Variant::Shogi, &cfg).net_shape();
    let net = Net::new(&cfg, shape, seed, Device::Cpu).unwrap();
    let meta = ModelMeta {
        variant: Variant::Shogi,
        encoder_version: Encoder::VERSION,
        net: cfg,
        shape,
        step: 7,
        parameters: 0,
        created_unix_ms: 0,
        producer: String::new(),
        // Both players take the setting the file records.
        leaf_material: Some(LEAF_MATERIAL),
    };
    let path = dir.join("random.safetensors");
    model::write_model_file(&net, &meta, &path).unwrap();
    path
}

fn engine(model: &Path) -> Core {
    let mut core = Core::new();
    let model = model.to_string_lossy();
    // The arena player's settings: one thread, its batch, the default tree cap (256 MiB).
    for (name, value) in
        [("ModelFile", &*model), ("Device", "cpu"), ("Threads", "1"), ("BatchSize", "8"), ("USI_Hash", "256")]
    {
        core.set_option(name, value).unwrap();
    }
    core.load_network().unwrap();
    core.new_game();
    core
}

fn engine_search(core: &mut Core, pos: &Position) -> SearchOutcome {
    let (tx, rx) = mpsc::channel();
    let limits = Limits { nodes: Some(NODES), ..Limits::default() };
    let done = Box::new(move |o: SearchOutcome| tx.send(o).unwrap());
    core.start(pos.clone(), limits, Box::new(|_| {}), done).unwrap();
    let outcome = rx.recv_timeout(Duration::from_secs(120)).unwrap();
    core.stop();
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    outcome
}

fn arena_move(player: &mut KomaPlayer, start: &Position, moves: &[Move]) -> Move {
    let mut pos = start.clone();
    for &mv in moves {
        pos.play(mv);
    }
    let req = GoRequest {
        pos: &pos,
        start,
        moves,
        limit: TimeControl::Nodes(NODES),
        clocks: None,
        deadline: Instant::now() + Duration::from_secs(120),
        end_rules: rules::EndRules::default(),
    };
    match player.go(&req).unwrap() {
        Action::Move(mv) => mv,
        other => panic!("{other:?}"),
    }
}

fn visits(root: &[ChildInfo]) -> Vec<(String, u32)> {
    root.iter().map(|c| (c.mv.to_usi(), c.visits)).collect()
}

#[test]
fn the_engine_and_the_arena_player_search_alike() {
    let dir = tempfile::tempdir().unwrap();
    let model = random_model(dir.path(), 11);
    let mut core = engine(&model);
    let network = KomaNetwork::load(&model, "cpu", Variant::Shogi).unwrap();
    let config = KomaConfig { batch_size: BATCH, threads: 1, ..KomaConfig::default() };
    let mut player = KomaPlayer::new(network, config, Variant::Shogi).unwrap();
    // Both search with the network's leaf material setting (neither is told it).
    let leaf = |s: &search::SearchConfig| (s.leaf_material_mix, s.leaf_material_scale);
    assert_eq!(leaf(&core.search_config()), (LEAF_MATERIAL.mix, LEAF_MATERIAL.scale));
    assert_eq!(leaf(player.search()), (LEAF_MATERIAL.mix, LEAF_MATERIAL.scale));

    let start = Position::startpos(Variant::Shogi);
    player.new_game(&start).unwrap();
    let mut moves: Vec<Move> = Vec::new();
    let mut pos = start.clone();
    for usi in ["7g7f", "3c3d"] {
        moves.push(pos.play_usi(usi).unwrap());
    }
    for turn in 0..2 {
        let ours = engine_search(&mut core, &pos);
        let theirs = arena_move(&mut player, &start, &moves);
        assert_eq!(ours.best, Some(theirs), "move {turn}");
        assert_eq!(visits(&ours.root), visits(player.last_root()), "move {turn}");
        assert_eq!(ours.info.nodes, NODES);
        let total: u32 = ours.root.iter().map(|c| c.visits).sum();
        if turn == 0 {
            // The random network's priors are not uniform, so the test compares searches
            // that the network shapes; a fresh tree holds this search's visits only.
            let priors: Vec<f32> = ours.root.iter().map(|c| c.prior).collect();
            assert!(priors.iter().any(|&p| (p - priors[0]).abs() > 1e-4), "{priors:?}");
            assert_eq!(total as u64, NODES - 1);
        } else {
            // Both kept the subtree of the two moves played since the last search.
            assert!(total as u64 > NODES - 1, "{total}");
        }
        // Both sides play the searched move and the expected reply (in both trees).
        let best = ours.best.unwrap();
        pos.play(best);
        moves.push(best);
        let reply = ours.ponder.unwrap();
        pos.play(reply);
        moves.push(reply);
    }
}
