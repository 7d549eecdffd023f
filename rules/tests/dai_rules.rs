//! Dai and sho shogi readings on small hand-built positions (see
//! `rules/README.md`): lion moves and the pass, line lions, promotion under
//! `EnterOrCapture`, the repetition ban, royal capture and bare king, and
//! the USI and XBoard texts of every move.

mod support;

use rules::{EndRules, Move, Notation, Position, Variant, XboardError};
use support::dai;

fn usi_moves(pos: &Position) -> Vec<String> {
    let mut v: Vec<String> = pos.legal_moves().iter().map(|m| m.to_usi()).collect();
    v.sort();
    v
}

fn from_square(pos: &Position, from: &str) -> Vec<String> {
    usi_moves(pos)
        .into_iter()
        .filter(|m| m.starts_with(from) && !m[from.len()..].starts_with(char::is_alphabetic))
        .collect()
}

#[test]
fn start_position() {
    let pos = Position::startpos(Variant::Dai);
    assert_eq!(pos.legal_moves().len(), 71);
    assert_eq!(Position::from_sfen(Variant::Dai, &pos.to_sfen()).unwrap(), pos);
    // No pass yet: every neighbour of the lion is occupied.
    let passes = |p: &Position| p.legal_moves().iter().filter(|m| p.to_xboard(**m) == "@@@@").count();
    assert_eq!(passes(&pos), 0);
    // Free the free king's square: one pass, whichever piece could make it.
    let pos =
        rules::parse_position_with(Variant::Dai, "startpos moves h5h6 h11h10 h4h5 h12h11", Notation::Xboard).unwrap();
    assert_eq!(passes(&pos), 1);
}

#[test]
fn lion_double_moves_igui_and_pass() {
    // Sente lion on 8h, gote pawns on 7g and 9g, a sente pawn on 8g.
    let pos = dai(&[("8h", "LN"), ("7g", "p"), ("9g", "p"), ("8g", "P"), ("8o", "K"), ("8a", "k")], "b");
    let lion = from_square(&pos, "8h");
    // Single steps and the 24 squares two away (own pawn on 8g blocks only 8g).
    assert!(lion.contains(&"8h7g".to_string()) && !lion.contains(&"8h8g".to_string()));
    assert!(lion.contains(&"8h8f".to_string()), "jump over the own pawn");
    // After capturing on 7g: igui, or hit-and-run to an empty neighbour of
    // 7g, never onto the own pawn.
    assert!(lion.contains(&"8h7g8h".to_string()), "igui");
    assert!(lion.contains(&"8h7g6f".to_string()), "hit and run");
    assert!(!lion.contains(&"8h7g8g".to_string()), "own piece");
    assert!(!lion.contains(&"8h7g7g".to_string()));
    // The pass: a lion move out to an empty square and back, once.
    let passes: Vec<Move> = pos
        .legal_moves()
        .into_iter()
        .filter(|&m| matches!(m, Move::Lion { from, to, .. } if from == to) && pos.to_xboard(m) == "@@@@")
        .collect();
    assert_eq!(passes.len(), 1);
    // Both pawns are taken by a double capture when they are adjacent to each other.
    let pos = dai(&[("8h", "LN"), ("7g", "p"), ("6g", "p"), ("8o", "K"), ("8a", "k")], "b");
    assert!(from_square(&pos, "8h").contains(&"8h7g6g".to_string()));
    // Text: USI three squares, XBoard two legs.
    let mv = pos.parse_usi("8h7g6g").unwrap();
    assert_eq!(pos.to_xboard(mv), "h8i9,i9j9");
    assert_eq!(pos.parse_xboard("h8i9,i9j9").unwrap(), mv);
    // A two-leg spelling over an empty square is not a move (HaChu agrees).
    assert!(matches!(pos.parse_xboard("h8h9,h9h10"), Err(XboardError::Illegal { .. })));
}

#[test]
fn no_pass_without_an_empty_lion_neighbour() {
    let mut pieces = vec![("8h", "LN"), ("8o", "K"), ("8a", "k")];
    for sq in ["7g", "8g", "9g", "7h", "9h", "7i", "8i", "9i"] {
        pieces.push((sq, "P"));
    }
    let pos = dai(&pieces, "b");
    assert!(!pos.legal_moves().iter().any(|&m| pos.to_xboard(m) == "@@@@"));
    assert!(pos.parse_xboard("@@@@").is_err());
}

#[test]
fn horned_falcon_and_soaring_eagle_have_lion_power_on_their_lines() {
    // Horned falcon (promoted dragon horse) on 8h, gote pawn straight ahead.
    let pos = dai(&[("8h", "+H"), ("8g", "p"), ("7g", "p"), ("8o", "K"), ("8a", "k")], "b");
    let hf = from_square(&pos, "8h");
    assert!(hf.contains(&"8h8g8h".to_string()), "igui forward");
    assert!(hf.contains(&"8h8g8f".to_string()), "capture and go on");
    assert!(!hf.iter().any(|m| m.starts_with("8h7g") && m.len() > 4), "no lion power diagonally");
    assert!(hf.contains(&"8h8f".to_string()), "jump two forward");
    assert!(!hf.contains(&"8h8e".to_string()), "no forward slide beyond two");
    // Soaring eagle (promoted dragon king): diagonally forward only.
    let pos = dai(&[("8h", "+D"), ("8g", "p"), ("7g", "p"), ("8o", "K"), ("8a", "k")], "b");
    let se = from_square(&pos, "8h");
    assert!(se.contains(&"8h7g8h".to_string()) && se.contains(&"8h7g6f".to_string()));
    assert!(!se.iter().any(|m| m.starts_with("8h8g") && m.len() > 4));
    // Gote's falcon looks the other way.
    let pos = dai(&[("8h", "+h"), ("8i", "P"), ("8o", "K"), ("8a", "k")], "w");
    assert!(from_square(&pos, "8h").contains(&"8h8i8j".to_string()));
}

#[test]
fn promotion_enter_or_capture() {
    // Sente gold on 5f (outside the zone, ranks a-e), gote pawns to capture.
    let pos = dai(&[("5f", "G"), ("5d", "S"), ("4c", "p"), ("8o", "K"), ("8a", "k")], "b");
    let g = from_square(&pos, "5f");
    assert!(g.contains(&"5f5e+".to_string()) && g.contains(&"5f5e".to_string()), "entering may promote");
    let s = from_square(&pos, "5d");
    assert!(s.contains(&"5d5c".to_string()) && !s.contains(&"5d5c+".to_string()), "non-capture inside never promotes");
    assert!(s.contains(&"5d4c+".to_string()) && s.contains(&"5d4c".to_string()), "capture inside may promote");
    // A capture starting in the zone may promote, also when it leaves it;
    // quiet moves starting there may not.
    let pos = dai(&[("5e", "G"), ("4e", "p"), ("8o", "K"), ("8a", "k")], "b");
    let g = from_square(&pos, "5e");
    assert!(g.contains(&"5e4e+".to_string()), "capture inside the zone");
    assert!(g.contains(&"5e5f".to_string()) && !g.contains(&"5e5f+".to_string()), "quiet move out of the zone");
    assert!(g.contains(&"5e6e".to_string()) && !g.contains(&"5e6e+".to_string()), "quiet move inside the zone");
    let pos = dai(&[("5e", "G"), ("5f", "p"), ("8o", "K"), ("8a", "k")], "b");
    assert!(from_square(&pos, "5e").contains(&"5e5f+".to_string()), "capture leaving the zone");
}

#[test]
fn forced_promotion_only_when_on_offer() {
    // Lance from outside the zone to the last rank: must promote.
    let pos = dai(&[("1f", "L"), ("8o", "K"), ("8b", "k")], "b");
    let l = from_square(&pos, "1f");
    assert!(l.contains(&"1f1a+".to_string()) && !l.contains(&"1f1a".to_string()));
    assert!(l.contains(&"1f1b".to_string()) && l.contains(&"1f1b+".to_string()));
    // A deferred lance inside the zone reaches the last rank unpromoted
    // (no promotion is on offer); a capture there must promote.
    let pos = dai(&[("1d", "L"), ("2d", "N"), ("2a", "p"), ("8o", "K"), ("8b", "k")], "b");
    let l = from_square(&pos, "1d");
    assert!(l.contains(&"1d1a".to_string()) && !l.contains(&"1d1a+".to_string()));
    let n = from_square(&pos, "2d");
    assert!(n.contains(&"2d1b".to_string()) && !n.contains(&"2d1b+".to_string()), "knight, quiet, inside the zone");
    // Such a dead piece is a valid dai position (and SFEN round-trips).
    let mut pos = pos;
    pos.play_usi("1d1a").unwrap();
    assert_eq!(Position::from_sfen(Variant::Dai, &pos.to_sfen()).unwrap(), pos);
    // A pawn capturing onto the last rank must promote.
    let pos = dai(&[("3b", "P"), ("3a", "s"), ("8o", "K"), ("8c", "k")], "b");
    assert_eq!(from_square(&pos, "3b"), vec!["3b3a+".to_string()]);
}

#[test]
fn moves_that_repeat_a_position_are_illegal() {
    let mut pos = dai(&[("8o", "K"), ("8a", "k"), ("1o", "P"), ("1a", "p")], "b");
    for m in ["8o8n", "8a8b", "8n8o"] {
        pos.play_usi(m).unwrap();
    }
    // 8b8a would recreate the first position.
    assert!(!usi_moves(&pos).contains(&"8b8a".to_string()));
    assert!(usi_moves(&pos).contains(&"8b7a".to_string()));
    let err = pos.parse_usi("8b8a").unwrap_err().to_string();
    assert!(err.contains("repeats an earlier position"), "{err}");
    // The ban is a setting: without it the move is legal and the fourth
    // occurrence ends the game instead.
    assert!(pos.repetition_illegal());
    pos.set_repetition_illegal(false);
    assert!(usi_moves(&pos).contains(&"8b8a".to_string()));
    pos.play_usi("8b8a").unwrap();
    for m in ["8o8n", "8a8b", "8n8o", "8b8a", "8o8n", "8a8b", "8n8o"] {
        assert!(pos.outcome(&Default::default()).is_none());
        pos.play_usi(m).unwrap();
    }
    pos.play_usi("8b8a").unwrap();
    assert_eq!(pos.outcome(&Default::default()).map(|o| o.to_text()), Some("draw repetition".to_string()));
    // A pass that recreates the position before the opponent's move is
    // banned as well: sente passes, gote passes back.
    let mut pos = dai(&[("8o", "K"), ("8a", "k"), ("5h", "LN"), ("5b", "ln")], "b");
    pos.play_xboard("@@@@").unwrap();
    pos.play_xboard("@@@@").unwrap_err();
}

#[test]
fn royal_capture_and_bare_king() {
    let rules = EndRules::default();
    let outcome = |p: &Position| p.outcome(&rules).map_or("none ongoing".to_string(), |o| o.to_text());
    // No check rule: sente may leave its king to be taken.
    let mut pos = dai(&[("8o", "K"), ("8a", "k"), ("8c", "R"), ("1o", "P"), ("1a", "p"), ("8m", "r")], "b");
    assert!(usi_moves(&pos).contains(&"1o1n".to_string()), "king left attacked");
    pos.play_usi("1o1n").unwrap();
    pos.play_usi("8m8o").unwrap();
    assert_eq!(outcome(&pos), "gote royal_capture");
    // With a crown prince the king's loss is not the end.
    let mut pos = dai(&[("8o", "K"), ("7o", "+E"), ("8a", "k"), ("1o", "P"), ("1a", "p"), ("8m", "r")], "b");
    pos.play_usi("1o1n").unwrap();
    pos.play_usi("8m8o").unwrap();
    assert_eq!(outcome(&pos), "none ongoing");
    // Bare king: gote takes sente's last non-royal piece.
    let mut pos = dai(&[("8o", "K"), ("8a", "k"), ("1n", "P"), ("1m", "g"), ("2a", "p")], "w");
    pos.play_usi("1m1n").unwrap();
    assert_eq!(outcome(&pos), "gote bare_king");
    // Sho: two royals, gote takes the prince; then the king is alone.
    let sho = |sfen: &str| Position::from_sfen(Variant::Sho, sfen).unwrap();
    let mut pos = sho("4k4/9/9/9/4r4/8P/9/4+E4/4K4 w - 1");
    pos.play_usi("5e5h").unwrap();
    assert_eq!(outcome(&pos), "none ongoing");
    let pos = sho("4k4/9/9/9/9/9/9/4r4/4K4 b - 1");
    assert_eq!(outcome(&pos), "gote bare_king");
    // Sho: with king and prince the king may step onto an attacked square.
    let pos = sho("4k4/9/9/9/3r5/8P/9/4+E4/4K4 b - 1");
    assert!(usi_moves(&pos).contains(&"5i6i".to_string()));
}

#[test]
fn every_move_text_round_trips() {
    // Walk a few pseudo-random dai and sho games; every legal move's USI
    // and XBoard texts parse back to the same move.
    for variant in [Variant::Dai, Variant::Sho] {
        let mut pos = Position::startpos(variant);
        let mut seed = 12345u64;
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome(&EndRules::default()).is_some() {
                break;
            }
            for &m in &moves {
                for notation in [Notation::Usi, Notation::Xboard] {
                    let text = pos.move_text(m, notation);
                    assert_eq!(pos.parse_move(&text, notation).unwrap(), m, "{variant} {text}");
                }
            }
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let m = moves[(seed >> 33) as usize % moves.len()];
            pos.play(m);
        }
    }
}

#[test]
fn a_finished_game_without_a_royal_reads_back() {
    // Gote's king is gone: sente has won by royal capture; the SFEN of that
    // final position must parse again.
    let pos = dai(&[("8o", "K"), ("1o", "P"), ("1a", "p")], "w");
    assert_eq!(pos.outcome(&Default::default()).map(|o| o.to_text()), Some("sente royal_capture".to_string()));
    let again = Position::from_sfen(Variant::Dai, &pos.to_sfen()).unwrap();
    assert_eq!(again, pos);
}
