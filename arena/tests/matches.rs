//! Matches end to end: built-in players, fake engines that misbehave (illegal move,
//! crash, hang, false declaration), koma checkpoints, and a smoke match between real
//! engines (fairy-stockfish over USI, GNU Shogi over XBoard/xshogi).

use std::path::{Path, PathBuf};
use std::time::Duration;

use arena::{run_match, MatchConfig, Opening, PlayerSpec, Sprt, SprtStatus, TimeControl};
use rules::{EndRules, ImpasseRule, Variant};

fn config(players: &[&str], games: u32, out: &Path) -> MatchConfig {
    MatchConfig {
        players: players.iter().map(|p| p.parse::<PlayerSpec>().unwrap()).collect(),
        gauntlet: None,
        ladder: false,
        games,
        tc: TimeControl::Byoyomi { ms: 2000 },
        openings: vec![Opening::startpos(Variant::Shogi)],
        concurrency: 2,
        sprt: None,
        out: out.to_path_buf(),
        variant: Variant::Shogi,
        end_rules: EndRules { impasse: ImpasseRule::Declaration27, max_plies: Some(200) },
        time_margin: Duration::from_millis(500),
        hang_timeout: Duration::from_secs(2),
        seed: 7,
        command_line: None,
        progress: false,
        resume: false,
    }
}

fn games(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Replays a game row with the rules: every move legal, and the rules' end matches.
fn check_replay(g: &serde_json::Value) {
    let mut pos = rules::Position::from_sfen(Variant::Shogi, g["start"].as_str().unwrap()).unwrap();
    for m in g["moves"].as_array().unwrap() {
        pos.play_usi(m.as_str().unwrap()).unwrap();
    }
    let reason = g["reason"].as_str().unwrap();
    if let Some(o) = pos.outcome(&EndRules { impasse: ImpasseRule::Declaration27, max_plies: Some(200) }) {
        assert_eq!(o.reason.name(), reason, "{g}");
        let w = match o.winner {
            Some(rules::Color::Sente) => "sente",
            Some(rules::Color::Gote) => "gote",
            None => "draw",
        };
        assert_eq!(g["winner"], w);
    }
}

#[test]
fn builtin_players_round_robin() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let cfg = config(&["random=random", "greedy=greedy", "greedy2=greedy"], 4, &out);
    let report = run_match(&cfg).unwrap();
    assert_eq!(report.games, 12);
    assert_eq!(report.pairs.len(), 3);
    let rows = games(&out);
    assert_eq!(rows.len(), 12);
    for g in &rows {
        for key in ["sente", "gote", "winner", "reason", "moves"] {
            assert!(!g[key].is_null(), "{key} missing in {g}");
        }
        check_replay(g);
    }
    // Greedy beats random.
    let rg = &report.pairs[0];
    assert_eq!((rg.first.as_str(), rg.second.as_str()), ("random", "greedy"));
    assert!(rg.wdl.score() < 0.5, "{:?}", rg.wdl);
    assert_eq!(report.ratings.len(), 3);
    assert!(report.ratings[1] > report.ratings[0]);
    let table = report.table();
    assert!(
        table.contains("random vs greedy") && table.contains("95% interval") && table.contains("rating"),
        "{table}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| random vs greedy |"), "{md}");
    // Records of standard shogi games.
    assert_eq!(std::fs::read_dir(out.join("kif")).unwrap().count(), 12);
    let csa = std::fs::read_to_string(out.join("games.csa")).unwrap();
    assert_eq!(rules::records::read_csa_games(&csa).unwrap().len(), 12);
    assert!(report.summary().starts_with("arena: 12 games"));
}

#[test]
fn sprt_stops_a_decided_match() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let mut cfg = config(&["greedy=greedy", "random=random"], 1000, &out);
    cfg.sprt = Some(Sprt::new(0.0, 100.0));
    cfg.concurrency = 1;
    let report = run_match(&cfg).unwrap();
    let (_, _, status) = report.sprt.unwrap();
    assert_eq!(status, SprtStatus::AcceptH1);
    assert!(report.games < 1000, "{} games", report.games);
}

#[test]
fn gauntlet_plays_only_its_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let mut cfg = config(&["a=greedy", "b=random", "c=random"], 2, &out);
    cfg.gauntlet = Some("a".into());
    let report = run_match(&cfg).unwrap();
    assert_eq!(report.pairs.len(), 2);
    assert!(report.pairs.iter().all(|p| p.first == "a"));
    assert_eq!(games(&out).len(), 4);
}

/// Writes an executable fake engine script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

/// A fake USI engine that does `on_go` when told to go, as a player spec (`usi:<path>`).
fn fake_usi(dir: &Path, name: &str, on_go: &str) -> String {
    let body = format!(
        "while read line; do\n  case \"$line\" in\n    usi) echo 'id name fake'; echo usiok;;\n    isready) echo readyok;;\n    go*) {on_go};;\n    quit) exit 0;;\n  esac\ndone\n"
    );
    format!("usi:{}", script(dir, name, &body).display())
}

/// A fake XBoard engine that does `on_go` when it is to move, as a player spec (`xboard:<path>`).
fn fake_xboard(dir: &Path, name: &str, on_go: &str) -> String {
    let body = format!(
        "while read line; do\n  case \"$line\" in\n    protover*) echo 'feature usermove=1 myname=\"fake\" done=1';;\n    go|usermove*) {on_go};;\n    quit) exit 0;;\n  esac\ndone\n"
    );
    format!("xboard:{}", script(dir, name, &body).display())
}

/// The fake loses every game, with `reason`, and the match finishes; returns the games.
fn fake_loses(engine: &str, reason: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let cfg = config(&[&format!("fake={engine}"), "random=random"], 2, &out);
    let report = run_match(&cfg).unwrap();
    assert_eq!(report.games, 2);
    assert_eq!(report.pairs[0].wdl.losses, 2, "{:?}", report.pairs[0]);
    let games = games(&out);
    for g in &games {
        let fake_color = if g["sente"] == "fake" { "sente" } else { "gote" };
        assert_ne!(g["winner"], fake_color);
        assert_ne!(g["winner"], "draw");
        assert_eq!(g["reason"], reason, "{g}");
    }
    games
}

/// Every game's detail names the move and the rules' reason for refusing it.
fn details_say(games: &[serde_json::Value], text: &str, why: &str) {
    for g in games {
        let detail = g["detail"].as_str().unwrap_or_default();
        let reason = detail.strip_prefix(&format!("illegal move '{text}': ")).unwrap_or_default();
        assert!(!reason.is_empty() && reason.contains(why), "{g}");
    }
}

#[test]
fn an_illegal_move_loses() {
    let dir = tempfile::tempdir().unwrap();
    let games = fake_loses(&fake_usi(dir.path(), "illegal.sh", "echo 'bestmove 5e5d'"), "illegal_move");
    details_say(&games, "5e5d", "no piece on the square moved from");
    let games = fake_loses(&fake_usi(dir.path(), "garbage.sh", "echo 'bestmove xyz'"), "illegal_move");
    details_say(&games, "xyz", "xyz");
}

#[test]
fn a_crash_loses() {
    let dir = tempfile::tempdir().unwrap();
    fake_loses(&fake_usi(dir.path(), "crash.sh", "exit 3"), "crash");
}

#[test]
fn a_hang_loses_on_time_or_as_hang() {
    let dir = tempfile::tempdir().unwrap();
    let e = fake_usi(dir.path(), "hang.sh", "exec sleep 60");
    // With a clock (byoyomi 2 s + 0.5 s margin): time.
    fake_loses(&e, "time");
    // At fixed depth (no clock): hang after the 2 s hang timeout.
    fake_loses(&format!("{e},depth=3"), "hang");
}

#[test]
fn a_false_declaration_loses() {
    let dir = tempfile::tempdir().unwrap();
    fake_loses(&fake_usi(dir.path(), "win.sh", "echo 'bestmove win'"), "false_declaration");
}

#[test]
fn a_resigning_engine_loses_by_resignation() {
    let dir = tempfile::tempdir().unwrap();
    let e = fake_usi(dir.path(), "resign.sh", "echo 'info string giving up'; echo 'bestmove resign'");
    fake_loses(&e, "resign");
}

#[test]
fn xboard_fakes_lose() {
    let dir = tempfile::tempdir().unwrap();
    let games = fake_loses(&fake_xboard(dir.path(), "xb-illegal.sh", "echo 'move a1a9'"), "illegal_move");
    details_say(&games, "a1a9", "");
    fake_loses(&fake_xboard(dir.path(), "xb-crash.sh", "exit 1"), "crash");
    fake_loses(&fake_xboard(dir.path(), "xb-claim.sh", "echo '1/2-1/2 {I say so}'"), "false_claim");
}

#[test]
fn a_missing_engine_stops_the_match_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&["x=usi:/nonexistent/engine", "r=random"], 2, &dir.path().join("m"));
    let err = run_match(&cfg).unwrap_err().to_string();
    assert!(err.contains("player x"), "{err}");
}

fn tiny_checkpoint(dir: &Path, step: u64, seed: u64) -> PathBuf {
    use model::encoding::{Encoder, ENCODER_VERSION};
    let enc = Encoder::new(Variant::Shogi);
    let cfg = model::NetConfig { blocks: 1, channels: 8, value_channels: 4, value_hidden: 8, ..Default::default() };
    let net = model::Net::new(&cfg, enc.net_shape(), seed, model::tch::Device::Cpu).unwrap();
    let path = dir.join(format!("ckpt-{step}"));
    let info =
        model::CheckpointInfo { variant: "shogi".into(), encoder_version: ENCODER_VERSION, step, leaf_material: None };
    model::save_checkpoint(&net, &path, &info).unwrap();
    path
}

#[test]
fn koma_checkpoints_play_and_get_plotted() {
    let dir = tempfile::tempdir().unwrap();
    let a = tiny_checkpoint(dir.path(), 100, 1);
    let b = tiny_checkpoint(dir.path(), 200, 2);
    let out = dir.path().join("m");
    let mut cfg = config(
        &[
            &format!("early=koma:{},nodes=8", a.display()),
            &format!("late=koma:{},nodes=8", b.display()),
            "random=random",
        ],
        2,
        &out,
    );
    cfg.end_rules.max_plies = Some(60);
    let report = run_match(&cfg).unwrap();
    assert_eq!(report.games, 6);
    assert_eq!(report.steps, vec![Some(100), Some(200), None]);
    let plot = report.plot.clone().expect("a series of checkpoints gets a plot");
    assert!(std::fs::read(plot).unwrap().starts_with(b"\x89PNG"));
    for g in games(&out) {
        assert!(!["crash", "illegal_move", "hang", "time"].contains(&g["reason"].as_str().unwrap()), "{g}");
    }
}

fn engine(name: &str) -> Option<PathBuf> {
    for dir in ["/usr/games", "/usr/bin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

/// Output of the previous game that comes late (Sjaak II's result claim after its own
/// mating move, a move it was still computing) is not read as the next game's reply: the
/// arena waits for `pong` to a `ping` at the start of every game. The fake prints a stale
/// illegal move after each `new` and resigns when asked to move, so it must lose every
/// game by resignation, none by an illegal move.
#[test]
fn stale_xboard_output_is_dropped_at_the_start_of_a_game() {
    let dir = tempfile::tempdir().unwrap();
    let body = "while read line; do\n  case \"$line\" in\n    protover*) echo 'feature usermove=1 ping=1 myname=\"fake\" done=1';;\n    new) sleep 0.3; echo 'move a1a9';;\n    ping*) echo \"pong ${line#ping }\";;\n    go|usermove*) echo resign;;\n    quit) exit 0;;\n  esac\ndone\n";
    let engine = format!("xboard:{}", script(dir.path(), "xb-stale.sh", body).display());
    fake_loses(&engine, "resign");
}

/// A smoke match between real engines. Skipped where they are not installed, except
/// under CI (the `CI` variable set), where `.ci/run` installs them: then missing
/// engines fail the test.
#[test]
fn real_engines_smoke_match() {
    let (Some(fsf), Some(gnu)) = (engine("fairy-stockfish"), engine("gnushogi")) else {
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but fairy-stockfish or gnushogi is missing: run scripts/install-engines.sh");
        }
        eprintln!("skipped: fairy-stockfish and gnushogi are not installed (scripts/install-engines.sh)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let openings =
        arena::load_openings(Variant::Shogi, &Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/openings/shogi.txt"))
            .unwrap();
    let mut cfg = config(
        &[
            &format!("fsf=usi:{},Threads=1,Hash=16,depth=1", fsf.display()),
            &format!("gnushogi=xboard:{},depth=1", gnu.display()),
            "greedy=greedy",
        ],
        2,
        &out,
    );
    cfg.openings = openings;
    cfg.gauntlet = Some("fsf".into());
    cfg.concurrency = 1;
    cfg.end_rules.max_plies = Some(160);
    cfg.hang_timeout = Duration::from_secs(30);
    let report = run_match(&cfg).unwrap();
    assert_eq!(report.games, 4);
    for g in games(&out) {
        let reason = g["reason"].as_str().unwrap();
        assert!(!["crash", "illegal_move", "hang", "time", "protocol_error"].contains(&reason), "{g}");
        check_replay(&g);
    }
}

/// The schedule's side of each game row: number, sente, gote, opening.
fn schedule_of(rows: &[serde_json::Value]) -> Vec<(u64, String, String, String)> {
    let mut s: Vec<_> = rows
        .iter()
        .map(|g| {
            let text = |k: &str| g[k].as_str().unwrap().to_string();
            (g["game"].as_u64().unwrap(), text("sente"), text("gote"), text("opening"))
        })
        .collect();
    s.sort();
    s
}

#[test]
fn a_stopped_match_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let mut cfg = config(&["random=random", "greedy=greedy"], 6, &out);
    cfg.openings =
        vec![Opening::startpos(Variant::Shogi), Opening::parse(Variant::Shogi, "startpos moves 7g7f").unwrap()];
    let full = run_match(&cfg).unwrap();
    let text = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Stopped after two games, while writing the third's line.
    let cut = format!("{}\n{}\n{}", lines[0], lines[1], &lines[2][..lines[2].len() / 2]);
    std::fs::write(out.join("games.jsonl"), &cut).unwrap();

    let err = run_match(&cfg).unwrap_err().to_string();
    assert!(err.contains("--resume") && err.contains("earlier match"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("games.jsonl")).unwrap(), cut, "not overwritten");

    cfg.resume = true;
    let resumed = run_match(&cfg).unwrap();
    assert_eq!(resumed.games, 6);
    let wdl = resumed.pairs[0].wdl;
    assert_eq!(wdl.wins + wdl.draws + wdl.losses, 6);
    let rows = games(&out);
    let full_rows: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(full.games, 6);
    assert_eq!(schedule_of(&rows), schedule_of(&full_rows));
    let after = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    assert!(after.starts_with(&format!("{}\n{}\n", lines[0], lines[1])), "the played games are kept as they were");

    // A finished match resumed plays nothing more.
    assert_eq!(run_match(&cfg).unwrap().games, 6);
    assert_eq!(games(&out).len(), 6);
}

#[test]
fn resume_refuses_a_folder_of_another_match() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let mut cfg = config(&["random=random", "greedy=greedy"], 2, &out);
    run_match(&cfg).unwrap();
    cfg.resume = true;
    let mut more = cfg.clone();
    more.games = 4;
    let err = run_match(&more).unwrap_err().to_string();
    assert!(err.contains("games per pair") && err.contains("match.json"), "{err}");
    let mut other = cfg.clone();
    other.players[1] = "greedy=random".parse().unwrap();
    let err = run_match(&other).unwrap_err().to_string();
    assert!(err.contains("players"), "{err}");
    assert_eq!(games(&out).len(), 2, "the games are untouched");

    // Games without match.json (an older koma's folder): not resumed.
    std::fs::remove_file(out.join("match.json")).unwrap();
    let err = run_match(&cfg).unwrap_err().to_string();
    assert!(err.contains("match.json"), "{err}");

    // --resume on a new folder starts the match.
    let fresh = config(&["random=random", "greedy=greedy"], 2, &dir.path().join("new"));
    assert_eq!(run_match(&arena::MatchConfig { resume: true, ..fresh }).unwrap().games, 2);
}
