//! Arena arguments at the door: a match of 0-ply games or 0 workers is
//! refused, and a silent engine fails within the hang timeout, handshake included.

use std::path::Path;
use std::time::{Duration, Instant};

use arena::{run_match, ArenaError, MatchConfig, Opening, PlayerSpec, TimeControl};
use rules::{EndRules, ImpasseRule, Variant};

fn config(players: &[&str], out: &Path) -> MatchConfig {
    MatchConfig {
        players: players.iter().map(|p| p.parse::<PlayerSpec>().unwrap()).collect(),
        gauntlet: None,
        ladder: false,
        games: 2,
        tc: TimeControl::Nodes(10),
        openings: vec![Opening::startpos(Variant::Shogi)],
        concurrency: 1,
        sprt: None,
        out: out.to_path_buf(),
        variant: Variant::Shogi,
        end_rules: EndRules { impasse: ImpasseRule::Declaration27, max_plies: Some(50) },
        time_margin: Duration::from_millis(500),
        hang_timeout: Duration::from_secs(2),
        seed: 1,
        command_line: None,
        progress: false,
        resume: false,
    }
}

fn config_error(cfg: &MatchConfig) -> String {
    match run_match(cfg) {
        Err(ArenaError::Config(m)) => m,
        other => panic!("expected a config error, got {:?}", other.map(|r| r.summary())),
    }
}

#[test]
fn zero_plies_zero_workers_and_zero_hang_timeout_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let mut cfg = config(&["a=random", "b=greedy"], &out);
    cfg.end_rules.max_plies = Some(0);
    assert!(config_error(&cfg).contains("--max-plies"));
    let mut cfg = config(&["a=random", "b=greedy"], &out);
    cfg.concurrency = 0;
    assert!(config_error(&cfg).contains("--concurrency"));
    let mut cfg = config(&["a=random", "b=greedy"], &out);
    cfg.hang_timeout = Duration::ZERO;
    assert!(config_error(&cfg).contains("--hang-timeout"));
    assert!(!out.exists(), "a refused match leaves no output folder");
}

#[test]
fn a_silent_usi_engine_fails_within_the_hang_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&["cat=usi:/bin/cat", "b=random"], &dir.path().join("m"));
    let t = Instant::now();
    let Err(e) = run_match(&cfg) else { panic!("a silent engine cannot play") };
    let took = t.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?} with a 2 s hang timeout");
    let text = e.to_string();
    assert!(text.contains("cat") && text.contains("usiok") && text.contains("hang-timeout"), "{text}");
}
