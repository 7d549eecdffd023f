//! Mates are found whatever the network: the uniform evaluator (every move equally
//! likely, value 0) finds the mates in 1 of `data/fixtures/mates-shogi.tsv` within
//! `go nodes 800` and the mates in 3 within `go nodes 4000`, and reports `score mate N`.

mod common;

use common::*;

struct Row {
    sfen: String,
    plies: u32,
    answers: Vec<String>,
}

fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(repo_root().join("data/fixtures/mates-shogi.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Row {
                sfen: f[0].to_string(),
                plies: f[1].parse().unwrap(),
                answers: f[3].split(' ').map(String::from).collect(),
            }
        })
        .collect()
}

fn solve(plies: u32, nodes: u64, evaluator: &str) -> (usize, usize, Vec<String>) {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", evaluator), ("InfoInterval", "0")]);
    let (mut ok, mut total, mut failures) = (0, 0, Vec::new());
    for r in rows().into_iter().filter(|r| r.plies == plies) {
        total += 1;
        e.send(&format!("position sfen {}", r.sfen));
        e.send(&format!("go nodes {nodes}"));
        let out = e.until(60.0, "bestmove");
        let mv = out.last().unwrap().split_whitespace().nth(1).unwrap_or("").to_string();
        let mate = out.iter().any(|l| l.contains(&format!("score mate {plies} ")));
        if r.answers.contains(&mv) && mate {
            ok += 1;
        } else {
            failures.push(format!("{} -> {mv} (mate reported: {mate}; answers {:?})", r.sfen, r.answers));
        }
    }
    e.send("quit");
    (ok, total, failures)
}

#[test]
fn mates_in_one_within_800_nodes() {
    let (ok, total, failures) = solve(1, 800, "<uniform>");
    eprintln!("mate in 1, go nodes 800, uniform evaluator: {ok}/{total}");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn mates_in_three_within_4000_nodes() {
    let (ok, total, failures) = solve(3, 4000, "<uniform>");
    eprintln!("mate in 3, go nodes 4000, uniform evaluator: {ok}/{total}");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn mates_in_three_with_a_random_network() {
    let ckpt = tiny_checkpoint("shogi");
    let (ok, total, failures) = solve(3, 4000, ckpt.to_str().unwrap());
    eprintln!("mate in 3, go nodes 4000, random network: {ok}/{total}");
    assert!(failures.is_empty(), "{failures:#?}");
}
