//! The tsume solver on the reference set `data/tsume/reference.tsv` (positions labelled by
//! cshogi's df-pn; see `scripts/ref/make_tsume_set.py`): the same verdict on every
//! position, and every mate a legal line in which the attacker checks with each move and
//! the defender ends mated (checked with our rules; `scripts/ref/check_tsume.py` checks
//! the engine's answers with cshogi).
//!
//! Each position may search [`NODES`] nodes (`KOMA_TSUME_NODES` to change it): a node
//! budget, not a clock, so that the test means the same on a loaded machine. Mates are
//! not shortened here (that is the engine's `go mate`, timed by
//! `scripts/ref/check_tsume.py`). `KOMA_TSUME_SET=<file>` runs another file of the same
//! format; `KOMA_TSUME_VERBOSE=1` prints each position's result, nodes and time.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rules::{Move, Position, Variant};
use search::mate::{MateLimits, MateSolver, MateVerdict};
use search::Control;

/// Nodes each position may search: several times what the hardest one needs.
const NODES: u64 = 8_000_000;

struct Problem {
    line: usize,
    sfen: String,
    mate: bool,
    cshogi_plies: usize,
}

fn reference_path() -> PathBuf {
    std::env::var_os("KOMA_TSUME_SET")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/tsume/reference.tsv"))
}

fn problems() -> Vec<Problem> {
    let path = reference_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.starts_with("# koma tsume reference v1\n"), "{}: not a v1 reference file", path.display());
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(f.len() >= 3, "line {}: {l}", i + 1);
            let mate = match f[1] {
                "mate" => true,
                "nomate" => false,
                other => panic!("line {}: verdict {other}", i + 1),
            };
            Problem { line: i + 1, sfen: f[0].to_string(), mate, cshogi_plies: f[2].parse().unwrap() }
        })
        .collect()
}

/// Why `line` is not a legal mating sequence from `pos` with a check at every attacker's
/// move, if it is not.
fn mating_line_problem(mut pos: Position, line: &[Move]) -> Option<String> {
    let attacker = pos.side_to_move();
    for (i, &mv) in line.iter().enumerate() {
        if !pos.legal_moves().contains(&mv) {
            return Some(format!("ply {}: {mv} is illegal", i + 1));
        }
        let mover = pos.side_to_move();
        pos.play(mv);
        if mover == attacker && !pos.in_check() {
            return Some(format!("ply {}: {mv} gives no check", i + 1));
        }
    }
    let mated = pos.side_to_move() != attacker && pos.in_check() && !pos.has_legal_move();
    (!mated).then(|| format!("the line ends in {} without mate", pos.to_sfen()))
}

#[test]
fn the_solver_agrees_with_the_reference_set() {
    let nodes: u64 = std::env::var("KOMA_TSUME_NODES").ok().map_or(NODES, |s| s.parse().unwrap());
    let verbose = std::env::var_os("KOMA_TSUME_VERBOSE").is_some();
    let problems = problems();
    assert!(problems.len() >= 200 || std::env::var_os("KOMA_TSUME_SET").is_some(), "{} problems", problems.len());
    let mut solver = MateSolver::new(std::env::var("KOMA_TSUME_MIB").ok().map_or(64, |s| s.parse().unwrap()));
    let control = Control::new();
    let mut failures = Vec::new();
    let (mut longer, mut shorter, mut total, mut slowest) = (0, 0, Duration::ZERO, (Duration::ZERO, 0));
    for p in &problems {
        let pos = Position::from_sfen(Variant::Shogi, &p.sfen).unwrap();
        let start = Instant::now();
        let limits = MateLimits { nodes: Some(nodes), shorten: false, ..MateLimits::default() };
        let report = solver.solve(&pos, &limits, &control).unwrap();
        let took = start.elapsed();
        if verbose {
            let plies = match &report.verdict {
                MateVerdict::Mate(l) => l.len().to_string(),
                v => format!("{v:?}"),
            };
            println!(
                "line {} cshogi {} ours {plies} nodes {} {took:?} (first: {} nodes {:?})",
                p.line, p.cshogi_plies, report.nodes, report.first_nodes, report.first_elapsed
            );
        }
        total += took;
        if took > slowest.0 {
            slowest = (took, p.line);
        }
        match (&report.verdict, p.mate) {
            (MateVerdict::Mate(line), true) => {
                if let Some(why) = mating_line_problem(pos, line) {
                    failures.push(format!("line {}: {why}", p.line));
                }
                longer += (line.len() > p.cshogi_plies) as usize;
                shorter += (line.len() < p.cshogi_plies) as usize;
            }
            (MateVerdict::NoMate, false) => {}
            (v, _) => failures.push(format!(
                "line {}: {} {}: expected {}, got {v:?} after {took:?}",
                p.line,
                p.sfen,
                if p.mate { format!("(cshogi: mate in {})", p.cshogi_plies) } else { String::new() },
                if p.mate { "a mate" } else { "no mate" }
            )),
        }
    }
    println!(
        "{} problems in {total:?} (slowest {:?}, line {}); mates longer than cshogi's: {longer}, shorter: {shorter}",
        problems.len(),
        slowest.0,
        slowest.1
    );
    assert!(failures.is_empty(), "{} of {} problems failed:\n{}", failures.len(), problems.len(), failures.join("\n"));
}
