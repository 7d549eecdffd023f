//! XBoard protocol: koma-usi --xboard plays whole games of sho shogi against Sjaak II
//! and of dai shogi against HaChu, refereed here with koma's rules (every move of both
//! sides checked). (HaChu 0.21 as packaged refuses its own `variant sho` setup, so sho
//! is played against Sjaak II.)

mod common;

use std::path::Path;

use common::*;
use rules::{Color, Position, Variant};

/// An XBoard opponent.
struct Opponent {
    name: &'static str,
    path: &'static str,
    /// The Debian package that installs it.
    package: &'static str,
    variant: &'static str,
    init: &'static [&'static str],
    /// Whether it takes `usermove X` (feature usermove=1) or bare moves.
    usermove: bool,
}

const HACHU_DAI: Opponent = Opponent {
    name: "HaChu",
    path: "/usr/games/hachu",
    package: "hachu",
    variant: "dai",
    init: &["memory 64", "sd 2", "st 1", "nopost"],
    usermove: true,
};
const SJAAK_SHO: Opponent = Opponent {
    name: "Sjaak II",
    path: "/usr/games/sjaakii",
    package: "sjaakii",
    variant: "shoshogi",
    init: &["sd 2", "st 1", "nopost"],
    usermove: false,
};

fn xboard_init(e: &mut Engine, variant: &str, extra: &[&str]) {
    e.send("xboard");
    e.ask("protover 2", 20.0, |l| l.contains("done=1"));
    // Time controls after `new` (Sjaak II resets them there).
    e.send("new");
    e.send(&format!("variant {variant}"));
    for c in extra {
        e.send(c);
    }
    e.ask("ping 1", 60.0, |l| l.trim() == "pong 1");
}

/// The next move of an engine. HaChu sends a lion double move as two `move` lines, the
/// first ending in a comma (`move h13i12,` then `move i12j11`); they are joined.
fn next_move(e: &mut Engine, secs: f64) -> String {
    let pred = |l: &str| {
        l.starts_with("move ")
            || l == "resign"
            || l.starts_with("Illegal move")
            || l.starts_with("Error")
            || ["1-0", "0-1", "1/2-1/2"].iter().any(|r| l.starts_with(r))
    };
    let l = e.expect(secs, pred);
    let Some(mut mv) = l.strip_prefix("move ").map(str::to_string) else { return l };
    while mv.ends_with(',') {
        let next = e.expect(secs, |l| l.starts_with("move "));
        mv.push_str(&next["move ".len()..]);
    }
    mv
}

/// koma's settings in the games against `Opponent`s: the uniform evaluator, 150 nodes.
const UNIFORM_150: &[&str] = &["option ModelFile=<uniform>", "option NodesLimit=150", "nopost", "st 5"];

/// Plays one game, koma set up by the XBoard commands `koma_init`; returns (plies, how it
/// ended).
fn game(variant: Variant, opp: &Opponent, koma_sente: bool, max_plies: usize, koma_init: &[&str]) -> (usize, String) {
    let mut koma = Engine::start(&["--xboard"]);
    xboard_init(&mut koma, variant.name(), koma_init);
    let mut hachu = Engine::spawn(opp.path, &[]);
    xboard_init(&mut hachu, opp.variant, opp.init);
    let mut pos = Position::startpos(variant);
    // The engine to move first gets `go`; the other waits for moves (after `new` an
    // engine plays the second side).
    let mut plies = 0;
    let end;
    if koma_sente {
        koma.send("go");
    } else {
        hachu.send("go");
    }
    loop {
        let koma_turn = (pos.side_to_move() == Color::Sente) == koma_sente;
        let (mover, other) = if koma_turn { (&mut koma, &mut hachu) } else { (&mut hachu, &mut koma) };
        let who = if koma_turn { "koma" } else { "opponent" };
        let text = next_move(mover, 60.0);
        assert!(
            !text.starts_with("Illegal move") && !text.starts_with("Error"),
            "{who} answered '{text}' at ply {}: {}\nkoma:\n{}",
            plies + 1,
            pos.to_sfen(),
            koma_log(mover, other, koma_turn)
        );
        if text == "resign" {
            end = format!("{who} resigned");
            break;
        }
        if ["1-0", "0-1", "1/2-1/2"].iter().any(|r| text.starts_with(r)) {
            // A claim instead of a move (HaChu resigns with `0-1 {resign}`).
            assert!(!koma_turn, "koma claimed '{text}' instead of moving at ply {}: {}", plies + 1, pos.to_sfen());
            end = format!("{who} claimed {text}");
            break;
        }
        let mv = match pos.parse_xboard(&text) {
            Ok(mv) => mv,
            Err(e) => {
                assert!(
                    !koma_turn,
                    "koma played an illegal move '{text}' ({e}) at ply {}: {}\n{}",
                    plies + 1,
                    pos.to_sfen(),
                    koma.tail()
                );
                // Not koma's fault; logged for the rules (a disagreement with the opponent).
                end = format!("the opponent played {text}, illegal by koma's rules ({e}) in {}", pos.to_sfen());
                break;
            }
        };
        pos.play(mv);
        plies += 1;
        if let Some(o) = pos.outcome(&rules::EndRules::default()) {
            end = o.to_text();
            break;
        }
        if plies >= max_plies {
            end = format!("adjudicated after {plies} plies");
            break;
        }
        let to_opponent = koma_turn;
        if to_opponent && !opp.usermove {
            other.send(&text);
        } else {
            other.send(&format!("usermove {text}"));
        }
    }
    for e in [&mut koma, &mut hachu] {
        e.send("result 1/2-1/2 {end}");
        e.send("quit");
    }
    assert!(koma.wait_exit(10.0).success());
    (plies, end)
}

/// A game with each colour against `opp`; skipped (failed under CI) when `opp` is not installed.
fn games_against(variant: Variant, opp: &Opponent, max_plies: usize) {
    let what = format!("{} ({}, Debian package {})", opp.name, opp.path, opp.package);
    if !require(&what, Path::new(opp.path).exists()) {
        return;
    }
    for koma_sente in [true, false] {
        let (plies, end) = game(variant, opp, koma_sente, max_plies, UNIFORM_150);
        let side = if koma_sente { "sente" } else { "gote" };
        eprintln!("{variant} vs {} (koma {side}): {plies} plies, {end}", opp.name);
        assert!(plies > 1);
    }
}

#[test]
fn sho_shogi_games_against_sjaak() {
    games_against(Variant::Sho, &SJAAK_SHO, 400);
}

#[test]
fn dai_shogi_games_against_hachu() {
    games_against(Variant::Dai, &HACHU_DAI, 300);
}

/// HaChu at depth 1, for the game with a network.
const HACHU_DAI_DEPTH1: Opponent = Opponent { init: &["memory 64", "sd 1", "st 1", "nopost"], ..HACHU_DAI };

/// A whole dai game between koma-usi in XBoard mode with a network (a tiny untrained
/// checkpoint, as `koma-usi --init-model` writes it; 32 nodes a move) and HaChu at depth
/// 1, every move of both checked by koma's rules: it ends by the rules (royal capture,
/// bare king, no moves), a resignation or a claim, or is adjudicated at 200 plies.
#[test]
fn dai_game_of_a_network_against_hachu() {
    let what = format!("{} ({}, Debian package {})", HACHU_DAI.name, HACHU_DAI.path, HACHU_DAI.package);
    if !require(&what, Path::new(HACHU_DAI.path).exists()) {
        return;
    }
    let model = tiny_checkpoint("dai");
    let model_option = format!("option ModelFile={}", model.display());
    let init = [model_option.as_str(), "option NodesLimit=32", "nopost", "st 5"];
    let started = std::time::Instant::now();
    let (plies, end) = game(Variant::Dai, &HACHU_DAI_DEPTH1, true, 200, &init);
    eprintln!("dai, network vs HaChu depth 1: {plies} plies, {end}, {:.1} s", started.elapsed().as_secs_f64());
    assert!(plies > 1, "{end}");
    assert!(!end.contains("illegal by koma's rules"), "{end}");
}

#[test]
fn xboard_commands() {
    let mut e = Engine::start(&[]);
    // Auto-detected from the first command.
    e.send("xboard");
    let l = e.ask("protover 2", 10.0, |l| l.starts_with("feature myname"));
    assert!(l.contains("variants=\"shogi,sho,dai\"") && l.contains("usermove=1"));
    e.expect(10.0, |l| l.contains("done=1"));
    e.send("option ModelFile=<uniform>");
    e.send("option NodesLimit=100");
    e.send("new");
    e.send("variant dai");
    e.send("force");
    e.send("usermove h3j2");
    e.ask("usermove z9z9", 10.0, |l| l.starts_with("Illegal move") && l.ends_with("z9z9"));
    e.ask("frob", 10.0, |l| l.starts_with("Error (unknown command)"));
    e.ask("variant chess", 10.0, |l| l.starts_with("Error (unsupported variant)"));
    e.send("level 40 5 0");
    e.send("time 30000");
    e.send("otim 30000");
    e.send("go");
    let mv = next_move(&mut e, 30.0);
    let mut pos = Position::startpos(Variant::Dai);
    pos.play_xboard("h3j2").unwrap();
    assert!(pos.parse_xboard(&mv).is_ok(), "{mv}");
    e.ask("ping 7", 10.0, |l| l == "pong 7");
    e.send("quit");
    assert!(e.wait_exit(10.0).success());
}

fn koma_log(mover: &Engine, other: &Engine, koma_turn: bool) -> String {
    if koma_turn {
        mover.tail()
    } else {
        other.tail()
    }
}
