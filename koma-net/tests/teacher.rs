//! Teacher data and dlshogi's formats through the network commands: `koma gen` writes
//! samples whose targets follow the games, `koma learn` trains on chunks and on hcpe and
//! psv written by cshogi, `koma convert-samples` (hcpe3) is read back by koma's own reader.
//! (`koma convert --to hcpe`, read back by cshogi, is the front's: koma's
//! tests/convert_hcpe.rs.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::KOMA;
use dataio::{list_chunks, read_chunk, write_chunk, ChunkHeader, GameResult, Sample};
use model::encoding::Encoder;
use nn::EncoderLabels;
use rules::records::hcpe::hcpe3;
use rules::{Position, Variant};

const CONFIG: &str = concat!(
    tiny_network!(),
    r#"[train]
optimizer = "sgd"
lr = 0.01
warmup_steps = 2
batch_size = 16
checkpoint_interval = 4
log_interval = 2
q_mix = 0.5
seed = 9
"#
);

fn scratch(name: &str) -> (PathBuf, PathBuf) {
    common::scratch_with_config(&format!("koma-teacher-{name}"), CONFIG)
}

fn run(args: &[&str], extra: &[&Path]) -> Output {
    common::run_ok(KOMA, args, extra)
}

fn samples_of(dir: &Path) -> Vec<Sample> {
    list_chunks(dir).unwrap().iter().flat_map(|c| read_chunk(c, &EncoderLabels).unwrap().samples).collect()
}

fn data(path: &str) -> PathBuf {
    common::repo_path(path)
}

/// Splits the samples of `koma gen` (written game by game, in order) into games: a game
/// ends where `plies_left` reaches 1.
fn games_of(samples: &[Sample]) -> Vec<&[Sample]> {
    let mut games = Vec::new();
    let mut start = 0;
    for (i, s) in samples.iter().enumerate() {
        if s.plies_left == 1 {
            games.push(&samples[start..=i]);
            start = i + 1;
        }
    }
    games
}

#[test]
fn gen_samples_follow_the_game_and_learn_trains_on_them() {
    let (dir, cfg) = scratch("gen");
    let out = dir.join("gen");
    // Greedy against itself: no engine needed; max_plies high enough for decisive games.
    let o = run(
        &["gen", "--engine", "greedy", "--games", "6", "--concurrency", "2", "--random-plies", "4", "--quiet", "--out"],
        &[&out],
    );
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("6 games"), "{summary}");
    let samples = samples_of(&out);
    assert!(!samples.is_empty());
    let encoder = Encoder::new(Variant::Shogi);
    for s in &samples {
        // The policy target is one legal move of the position.
        assert_eq!(s.policy.len(), 1);
        let pos = Position::from_sfen(Variant::Shogi, &s.sfen).unwrap();
        assert!(encoder.index_move(&pos, s.policy[0].0 as usize).is_some(), "{}", s.sfen);
        // Greedy reports no score: the value target is the result itself.
        assert_eq!(s.root_wdl, s.result.unwrap().wdl());
    }
    // Within a game the result alternates with the side to move (one perspective per
    // sample), and a decisive game's last mover won (greedy takes a mate in one).
    let mut decisive = 0;
    for game in games_of(&samples) {
        for pair in game.windows(2) {
            assert_eq!(pair[1].result, pair[0].result.map(GameResult::flip), "{} -> {}", pair[0].sfen, pair[1].sfen);
        }
        if game.last().unwrap().result != Some(GameResult::Draw) {
            decisive += 1;
            assert_eq!(game.last().unwrap().result, Some(GameResult::Win));
        }
    }
    assert!(decisive > 0, "some greedy game ends in a mate");
    let o = Command::new(KOMA)
        .args(["learn", "--quiet", "--epochs", "2", "--run", "l", "--config"])
        .arg(&cfg)
        .arg("--records")
        .arg(&out)
        .arg("--runs-dir")
        .arg(dir.join("runs"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_dir(dir.join("runs/l/checkpoints")).unwrap().count() > 0);
    // --epochs 0 scores the learnt network on the same games, every position of them.
    let score = |init: Option<&Path>| {
        let mut cmd = Command::new(KOMA);
        cmd.args(["learn", "--quiet", "--epochs", "0", "--config"]).arg(&cfg).arg("--records").arg(&out);
        if let Some(net) = init {
            cmd.arg("--init").arg(net);
        }
        cmd.output().unwrap()
    };
    let net = dataio::run_layout::newest_checkpoint(&dir.join("runs/l")).unwrap();
    let o = score(Some(&net));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(printed.contains(&format!("scored on {} positions", samples.len())), "{printed}");
    let o = score(None);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--init"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gen_with_an_engine_records_its_scores() {
    let fsf = Path::new("/usr/games/fairy-stockfish");
    if !fsf.exists() {
        eprintln!("skipped: {} is not installed (scripts/install-engines.sh)", fsf.display());
        return;
    }
    let (dir, _) = scratch("gen-fsf");
    let out = dir.join("gen");
    let engine = format!("usi:{},Threads=1,Hash=16,depth=2", fsf.display());
    let o = run(&["gen", "--engine", &engine, "--games", "2", "--concurrency", "1", "--quiet", "--out"], &[&out]);
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("(0 without a score)"), "{summary}");
    let samples = samples_of(&out);
    // Scores become win probabilities; a decided game's winner is mostly ahead by its end.
    assert!(samples.iter().all(|s| s.root_wdl[1] == 0.0 && (s.root_wdl[0] + s.root_wdl[2] - 1.0).abs() < 1e-5));
    assert!(samples.iter().any(|s| s.root_wdl[0] != 0.5));
    let last = samples.last().unwrap();
    if last.result == Some(GameResult::Win) {
        assert!(last.root_wdl[0] > 0.5, "the mating side's score: {:?}", last.root_wdl);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn learn_trains_on_hcpe_hcpe3_and_psv_written_by_cshogi() {
    let (dir, cfg) = scratch("learn-hcpe");
    // YaneuraOu's usual name for psv: `.bin`, taken as psv when named as an input.
    let bin = dir.join("teacher.bin");
    std::fs::copy(data("data/psv/cshogi.psv"), &bin).unwrap();
    let bin = bin.to_str().unwrap().to_string();
    let inputs = [("data/hcpe/cshogi.hcpe", "h"), ("data/hcpe/cshogi.hcpe3", "h3"), ("data/psv/cshogi.psv", "p")];
    for (file, run_name) in inputs.into_iter().chain([(bin.as_str(), "b")]) {
        let o = Command::new(KOMA)
            .args(["learn", "--epochs", "2", "--run", run_name, "--config"])
            .arg(&cfg)
            .arg("--records")
            .arg(data(file))
            .arg("--runs-dir")
            .arg(dir.join("runs"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{file}: {stderr}");
        assert!(stderr.contains("0 problem(s)"), "{file}: {stderr}");
        if run_name == "p" || run_name == "b" {
            assert!(stderr.contains("(170 positions) from 0 chunk, 0 hcpe, 0 hcpe3, 1 psv"), "{file}: {stderr}");
        }
        assert!(std::fs::read_dir(dir.join("runs").join(run_name).join("checkpoints")).unwrap().count() > 0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn convert_chunks_to_hcpe3_keeps_positions_policies_and_results() {
    let (dir, _) = scratch("convert-hcpe3");
    let gen = dir.join("gen");
    run(&["gen", "--engine", "greedy", "--games", "2", "--concurrency", "1", "--quiet", "--out"], &[&gen]);
    let out = dir.join("samples.hcpe3");
    run(&["convert-samples", "-o"], &[&out, &gen]);
    let samples = samples_of(&gen);
    let games = hcpe3::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(games.len(), samples.len());
    let encoder = Encoder::new(Variant::Shogi);
    for (g, s) in games.iter().zip(&samples) {
        let pos = Position::from_sfen(Variant::Shogi, &s.sfen).unwrap();
        // hcpe3 positions carry no move number.
        let board = |p: &Position| p.to_sfen().rsplit_once(' ').unwrap().0.to_string();
        assert_eq!(board(&g.start), board(&pos));
        assert_eq!(encoder.move_index(&pos, g.moves[0].mv) as u32, s.policy[0].0);
        let winner = g.result.winner();
        let expected = match s.result.unwrap() {
            GameResult::Win => Some(pos.side_to_move()),
            GameResult::Loss => Some(pos.side_to_move().opponent()),
            GameResult::Draw => None,
        };
        assert_eq!(winner, expected, "{}", s.sfen);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A chunk of `results.len()` samples of the start position, one result each.
fn write_start_chunk(path: &Path, results: &[Option<GameResult>]) {
    let full: Vec<_> = results.iter().map(|&r| (r, true)).collect();
    write_start_chunk_searched(path, &full);
}

/// A chunk of samples of the start position: (result, full search) each; the policy
/// 7g7f 0.75, 2g2f 0.25.
fn write_start_chunk_searched(path: &Path, samples: &[(Option<GameResult>, bool)]) {
    let encoder = Encoder::new(Variant::Shogi);
    let pos = Position::startpos(Variant::Shogi);
    let label = |usi| encoder.move_index(&pos, pos.parse_usi(usi).unwrap()) as u32;
    let samples: Vec<Sample> = samples
        .iter()
        .map(|&(result, full_search)| Sample {
            sfen: pos.to_sfen(),
            repetitions: 0,
            policy: vec![(label("7g7f"), 0.75), (label("2g2f"), 0.25)],
            result,
            root_wdl: [0.5, 0.25, 0.25],
            plies_left: 10,
            full_search,
            aux: Default::default(),
        })
        .collect();
    let header = ChunkHeader { count: samples.len() as u32, ..ChunkHeader::of(Variant::Shogi, &EncoderLabels) };
    write_chunk(path, &header, &samples).unwrap();
}

/// A cheap search's sample trains no policy (playout cap randomization), so its hcpe3 move
/// has no candidates (dlshogi: no policy target) and reads back as value-only; a full
/// search's keeps its visits.
#[test]
fn convert_samples_keeps_cheap_searches_out_of_the_policy_targets() {
    let (dir, _) = scratch("convert-cheap");
    let chunk = dir.join("mixed.chunk");
    write_start_chunk_searched(&chunk, &[(Some(GameResult::Win), true), (Some(GameResult::Loss), false)]);
    let out = dir.join("mixed.hcpe3");
    run(&["convert-samples", "-o"], &[&out, &chunk]);
    let games = hcpe3::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    let pos = Position::startpos(Variant::Shogi);
    let (full, cheap) = (&games[0].moves[0], &games[1].moves[0]);
    let f7 = pos.parse_usi("7g7f").unwrap();
    assert_eq!(full.candidates, vec![(f7, 7500), (pos.parse_usi("2g2f").unwrap(), 2500)]);
    assert_eq!((cheap.mv, cheap.candidates.len()), (f7, 0), "the cheap search's first move, no candidates");
    let encoder = Encoder::new(Variant::Shogi);
    let read: Vec<Sample> =
        games.iter().flat_map(|g| dataio::hcpe::hcpe3_samples(g, |p, m| encoder.move_index(p, m) as u32)).collect();
    assert_eq!(read.iter().map(|s| s.full_search).collect::<Vec<_>>(), [true, false]);
    assert_eq!(read[1].result, Some(GameResult::Loss), "the value target stays");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: a chunk that did not read once emptied an existing hcpe3 file, and its error
/// named the chunk twice; each line now names its chunk once, and what does not convert
/// leaves the output as it was.
#[test]
fn convert_samples_names_each_chunk_once_and_writes_only_what_converted() {
    let (dir, _) = scratch("convert-samples-errors");
    let train = dir.join("train.hcpe3");
    std::fs::write(&train, b"earlier data").unwrap();
    let bad = dir.join("bad.chunk");
    std::fs::write(&bad, b"junk").unwrap();
    let o = Command::new(KOMA).arg("convert-samples").arg(&bad).arg("-o").arg(&train).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(std::fs::read(&train).unwrap(), b"earlier data", "{err}");
    let named = format!("{}:", bad.display());
    assert!(err.lines().all(|l| l.matches(&named).count() <= 1), "{err}");
    assert!(err.contains(&format!("{named} not a koma sample chunk")), "{err}");
    assert!(err.contains("not written"), "{err}");
    // Samples without a result are named by chunk and index; the others are written.
    let unknown = dir.join("unknown.chunk");
    write_start_chunk(&unknown, &[None, Some(GameResult::Win), None]);
    let o = Command::new(KOMA).arg("convert-samples").arg(&unknown).arg("-o").arg(&train).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}: sample #0 not converted (the first of 2", unknown.display())), "{err}");
    assert!(err.contains("result is unknown"), "{err}");
    assert!(err.contains(&format!("samples 1, errors 2 -> {}", train.display())), "{err}");
    assert_eq!(hcpe3::from_bytes(&std::fs::read(&train).unwrap()).unwrap().len(), 1);
    // An output that is one of the inputs is refused.
    let named_like_output = dir.join("c.hcpe3");
    write_start_chunk(&named_like_output, &[Some(GameResult::Draw)]);
    let before = std::fs::read(&named_like_output).unwrap();
    let o = Command::new(KOMA)
        .args([Path::new("convert-samples"), &named_like_output, Path::new("-o"), &named_like_output])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&named_like_output).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}
