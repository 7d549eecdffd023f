//! The rules and draw options a GUI user sets first: `EnteringKingRule` (YaneuraOu's),
//! `Draw_Value_Black` and `Draw_Value_White` (dlshogi's) and `MaxMovesToDraw`
//! (YaneuraOu's), driven over USI like a GUI with the uniform evaluator.

mod common;

use common::*;

fn bestmove(e: &mut Engine, position: &str, go: &str) -> String {
    e.send(&format!("position {position}"));
    let line = e.ask(go, 30.0, |l| l.starts_with("bestmove"));
    line.split_whitespace().nth(1).unwrap_or("").to_string()
}

#[test]
fn the_options_are_announced_and_bad_values_are_errors() {
    let mut e = Engine::start(&[]);
    e.send("usi");
    let lines = e.until(10.0, "usiok");
    for want in [
        "option name MaxMovesToDraw type spin default 0 min 0 max 1000000",
        "option name EnteringKingRule type combo default CSARule27 var NoEnteringKing var CSARule24 var CSARule27 var \
         TryRule",
        "option name Draw_Value_Black type spin default 500 min 0 max 1000",
        "option name Draw_Value_White type spin default 500 min 0 max 1000",
    ] {
        assert!(lines.iter().any(|l| l == want), "{want} not in {lines:?}");
    }
    for (name, value, says) in [
        ("EnteringKingRule", "CSARule25", "is not one of NoEnteringKing, CSARule24, CSARule27, TryRule"),
        ("Draw_Value_Black", "1001", "outside 0..1000"),
        ("Draw_Value_White", "-1", "outside 0..1000"),
        ("MaxMovesToDraw", "many", "is not an integer"),
    ] {
        let line = e.ask(&format!("setoption name {name} value {value}"), 5.0, |l| l.starts_with("info string error"));
        assert!(line.contains(name) && line.contains(says), "{name} {value}: {line}");
    }
    // The good values are taken silently; MaxPlies is still understood.
    for (name, value) in [("EnteringKingRule", "TryRule"), ("Draw_Value_Black", "0"), ("MaxPlies", "256")] {
        e.send(&format!("setoption name {name} value {value}"));
    }
    e.send("isready");
    let out = e.until(30.0, "readyok");
    assert!(!out.iter().any(|l| l.contains("error")), "{out:?}");
}

/// Sente's king in the camp with eleven pieces and 29 points: a declaration wins by the
/// 27-point rule (the default) but only draws by the 24-point rule, so the engine
/// declares under the one and plays on under the other and without a rule.
#[test]
fn the_entering_king_rule_decides_the_declaration() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    // The kings stand off 5a and 5i, which are their try squares.
    let camp29 = "sfen 5K3/PPPPPPPPP/3RB4/9/9/9/9/9/8k b RB 1";
    assert_eq!(bestmove(&mut e, camp29, "go nodes 100"), "win");
    for rule in ["CSARule24", "NoEnteringKing", "TryRule"] {
        e.send(&format!("setoption name EnteringKingRule value {rule}"));
        let mv = bestmove(&mut e, camp29, "go nodes 100");
        assert!(mv != "win" && mv != "resign" && !mv.is_empty(), "{rule}: {mv}");
    }
    // 31 points win by the 24-point rule too.
    e.send("setoption name EnteringKingRule value CSARule24");
    assert_eq!(bestmove(&mut e, "sfen 5K3/PPPPPPPPP/3RB4/9/9/9/9/9/8k b RB2P 1", "go nodes 100"), "win");
    // The try rule: the king one step from 5a steps there (a win), and a king that
    // already stands on its try square has won (the engine, the opponent, resigns).
    e.send("setoption name EnteringKingRule value TryRule");
    assert_eq!(bestmove(&mut e, "sfen 9/4K4/9/9/9/9/9/9/k8 b - 1", "go nodes 200"), "5b5a");
    assert_eq!(bestmove(&mut e, "sfen 4K4/9/9/9/9/9/9/9/k8 w - 1", "go nodes 100"), "resign");
    e.send("setoption name EnteringKingRule value CSARule27");
    assert_ne!(bestmove(&mut e, "sfen 4K4/9/9/9/9/9/9/9/k8 w - 1", "go nodes 100"), "resign");
}

/// Two pieces shuffle three times round: the next move of the cycle completes the
/// fourth occurrence, a draw by repetition. With the uniform evaluator every other move
/// is worth 0, so the engine seeks the repetition when its draw value is above 500 and
/// avoids it below; it reads Draw_Value_Black when it plays sente (black) and
/// Draw_Value_White when it plays gote, not the other.
#[test]
fn the_draw_value_of_the_engines_side_seeks_or_avoids_a_repetition() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    // Sente to move, two bare kings: 4i5i repeats (the cycle starts after the start
    // position, which occurs but once). A rook would promote, which the root's material
    // check (RootTactics) prefers whatever the draw value.
    let sente =
        format!("sfen 7k1/9/9/9/9/9/9/4K4/9 b - 1 moves 5h5i 2a1a 5i4i 1a2a {}", "4i5i 2a1a 5i4i 1a2a ".repeat(2));
    let sente = sente.trim();
    // Gote to move: 2a1a repeats.
    let gote = format!("sfen 8k/9/R8/9/9/9/9/9/4K4 b - 1 moves {}9c9d 1a2a 9d9c", "9c9d 1a2a 9d9c 2a1a ".repeat(2));
    let set = |e: &mut Engine, black: u32, white: u32| {
        e.send(&format!("setoption name Draw_Value_Black value {black}"));
        e.send(&format!("setoption name Draw_Value_White value {white}"));
    };
    let go = "go nodes 400";
    set(&mut e, 900, 100);
    assert_eq!(bestmove(&mut e, sente, go), "4i5i", "sente values a draw at 900");
    assert_ne!(bestmove(&mut e, &gote, go), "2a1a", "gote values a draw at 100");
    set(&mut e, 100, 900);
    assert_ne!(bestmove(&mut e, sente, go), "4i5i", "sente values a draw at 100");
    assert_eq!(bestmove(&mut e, &gote, go), "2a1a", "gote values a draw at 900");
}

/// MaxMovesToDraw: the position after that many plies is a draw, so there the game is
/// over (the engine answers an ended game with resign); 0 is no limit.
#[test]
fn max_moves_to_draw_ends_the_game_at_its_ply() {
    let mut e = Engine::start(&[]);
    e.handshake(&[("ModelFile", "<uniform>")]);
    let pos = "startpos moves 7g7f 3c3d 2g2f 4c4d";
    e.send("setoption name MaxMovesToDraw value 4");
    assert_eq!(bestmove(&mut e, pos, "go nodes 50"), "resign", "the game ended at ply 4");
    e.send("setoption name MaxMovesToDraw value 0");
    let mv = bestmove(&mut e, pos, "go nodes 50");
    assert!(mv != "resign" && !mv.is_empty(), "{mv}");
}
