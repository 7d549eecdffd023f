//! Inputs that readers once took wrongly (wrapped numbers, clamped times,
//! dropped text) or panicked on: each is now an error that names the rule
//! it breaks. The fuzz suite (tests/fuzz) looks for more of the same.

use rules::records::{read_csa, read_kif, write_csa_with, write_kif, CsaVersion, ErrorKind, MAX_MOVE_TIME};
use rules::{Position, SfenError, Variant, MAX_MOVE_NUMBER};
use std::time::Duration;

fn sfen(text: &str) -> Result<Position, SfenError> {
    Position::from_sfen(Variant::Shogi, text)
}

#[test]
fn sfen_digit_runs_do_not_wrap_around() {
    // A run of u64::MAX empty squares is -1 in wrapped arithmetic: the gold
    // was overwritten by the silver and the rest of the SFEN still added up.
    let e = sfen("k8/9/9/9/4G18446744073709551615S4/9/9/9/8K b - 1").unwrap_err();
    assert!(matches!(e, SfenError::EmptyRun { rank: 5, .. }), "{e}");
    // u64::MAX + 10 wraps to 9: the rank read as empty.
    let e = sfen("k8/9/9/9/18446744073709551625/9/9/9/8K b - 1").unwrap_err();
    assert!(matches!(e, SfenError::EmptyRun { rank: 5, .. }), "{e}");
    assert!(e.to_string().contains("18446744073709551625"), "{e}");
}

#[test]
fn sfen_counts_and_move_numbers_have_ranges() {
    let e = sfen("k8/9/9/9/9/9/9/9/8K b 18446744073709551617P 1").unwrap_err();
    assert!(matches!(e, SfenError::HandCount { piece: 'P', .. }), "{e}");
    let e = sfen("k8/9/9/9/9/9/9/9/8K b - 4294967297").unwrap_err();
    assert!(matches!(e, SfenError::MoveNumberOutOfRange { .. }), "{e}");
    // The largest move number leaves room to count the moves after it.
    let mut pos = sfen(&format!("k8/9/9/9/9/9/9/9/8K b - {MAX_MOVE_NUMBER}")).unwrap();
    pos.play_usi("1i1h").unwrap();
    assert_eq!(pos.move_number(), MAX_MOVE_NUMBER + 1);
    assert!(pos.to_sfen().ends_with(&format!(" {}", MAX_MOVE_NUMBER + 1)));
}

#[test]
fn usi_squares_have_no_leading_zero() {
    let pos = Position::startpos(Variant::Shogi);
    assert!(pos.parse_usi("7g7f").is_ok());
    for text in ["07g7f", "7g07f", "P*05e"] {
        assert!(pos.parse_usi(text).is_err(), "{text}");
    }
}

fn csa_error(text: &str) -> rules::records::RecordError {
    read_csa(text).expect_err(text)
}

#[test]
fn csa_times_are_validated_not_clamped() {
    for time in ["T-5", "TNaN", "Tinf", "T1e400", "T99999999999999999999", "T31536001", "T12.3456", "T12.", "T", "T+5"]
    {
        let e = csa_error(&format!("V3.0\nPI\n+\n+7776FU\n{time}\n"));
        assert_eq!((e.kind, e.line), (ErrorKind::Time, Some(5)), "{time}: {e}");
    }
    let r = read_csa("V3.0\nPI\n+\n+7776FU\nT12.345\n-3334FU\nT31536000\n").unwrap();
    assert_eq!(r.moves[0].time, Some(Duration::from_millis(12_345)));
    assert_eq!(r.moves[1].time, Some(MAX_MOVE_TIME));
    // A second time for one move was silently kept over the first.
    let e = csa_error("V2.2\nPI\n+\n+7776FU\nT3\nT5\n");
    assert_eq!((e.kind, e.line), (ErrorKind::Time, Some(6)), "{e}");
}

#[test]
fn csa_lines_with_multi_byte_text_are_errors_not_panics() {
    for line in ["Nあ", "PIあa", "PIあいうえ", "P+あいうえ"] {
        let e = csa_error(&format!("V2.2\n{line}\nPI\n+\n"));
        assert_eq!(e.line, Some(2), "{line}: {e}");
    }
    // 256 pawns in hand overflowed a u8 count.
    let e = csa_error(&format!("V2.2\nPI\nP+{}\n+\n", "00FU".repeat(256)));
    assert_eq!(e.line, Some(3), "{e}");
}

const KIF: &str = "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)        ( 0:12/00:00:12)\n   2 ３四歩(33)        ( 0:05/00:00:05)\n";

#[test]
fn kif_times_are_validated_not_dropped() {
    for bad in ["( 0:-5/00:00:05)", "(NaN:00/00:00:05)", "( 0:75/00:00:05)", "(9999999:00/00:00:05)", "( 0:05/garbage)"]
    {
        let e = read_kif(&KIF.replace("( 0:05/00:00:05)", bad)).expect_err(bad);
        assert_eq!((e.kind, e.line), (ErrorKind::Time, Some(4)), "{bad}: {e}");
    }
    let r = read_kif(&KIF.replace("( 0:05/00:00:05)", "(1:00:05/01:00:05)")).unwrap();
    assert_eq!(r.moves[1].time, Some(Duration::from_secs(3605)));
}

#[test]
fn kif_move_numbers_are_checked() {
    for (bad, line) in [
        ("   1 ７六歩(77)", "18446744073709551617 ７六歩(77)"),
        ("   1 ７六歩(77)", "   0 ７六歩(77)"),
        ("   2 ３四歩(33)", "   3 ３四歩(33)"),
    ] {
        let e = read_kif(&KIF.replace(bad, line)).expect_err(line);
        assert_eq!(e.kind, ErrorKind::MoveNumber, "{line}: {e}");
    }
    // The number after u64::MAX overflowed in the sequence check.
    let text = KIF.replace("   1 ", "18446744073709551615 ").replace("   2 ", "18446744073709551616 ");
    assert_eq!(read_kif(&text).unwrap_err().kind, ErrorKind::MoveNumber);
}

#[test]
fn kif_origins_and_hand_counts_are_read_whole() {
    let e = read_kif(&KIF.replace("(77)", "(7x7)")).unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::IllegalMove, Some(3)), "{e}");
    // 255 + 255 pawns overflowed a u8 count.
    let board = "後手の持駒：なし\n  ９ ８ ７ ６ ５ ４ ３ ２ １\n+---------------------------+\n|v香v桂v銀v金v玉v金v銀v桂v香|一\n| ・v飛 ・ ・ ・ ・ ・v角 ・|二\n|v歩v歩v歩v歩v歩v歩v歩v歩v歩|三\n| ・ ・ ・ ・ ・ ・ ・ ・ ・|四\n| ・ ・ ・ ・ ・ ・ ・ ・ ・|五\n| ・ ・ ・ ・ ・ ・ ・ ・ ・|六\n| 歩 歩 歩 歩 歩 歩 歩 歩 歩|七\n| ・ 角 ・ ・ ・ ・ ・ 飛 ・|八\n| 香 桂 銀 金 玉 金 銀 桂 香|九\n+---------------------------+\n先手の持駒：歩255 歩255\n";
    let e = read_kif(board).unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::Syntax, Some(14)), "{e}");
}

#[test]
fn writers_keep_missing_times_missing_and_refuse_overlong_ones() {
    // A move without a time was written as 0:00 and read back as zero.
    let mut record = read_kif(KIF).unwrap();
    record.moves[0].time = None;
    assert_eq!(read_kif(&write_kif(&record).unwrap()).unwrap(), record);
    record.moves[1].time = Some(MAX_MOVE_TIME + Duration::from_secs(1));
    assert_eq!(write_kif(&record).unwrap_err().kind, ErrorKind::Time);
    let e = write_csa_with(&record, CsaVersion::V30).unwrap_err();
    assert_eq!((e.kind, e.ply), (ErrorKind::Time, Some(2)));
}

#[test]
fn kif_summaries_end_the_game_and_round_trip() {
    // Sente is to move, yet the summary (the only word on the end) names
    // sente the winner. A numbered 投了 line would say gote won, so the
    // writer leaves it out and the game read back is the same.
    let text = KIF.replace("( 0:05/00:00:05)\n", "( 0:05/00:00:05)\nまで2手で先手の勝ち\n*after the end\n");
    let record = read_kif(&text).unwrap();
    let end = record.end.as_ref().unwrap();
    assert_eq!((end.winner, &end.comments[..]), (Some(rules::Color::Sente), &["after the end".to_string()][..]));
    let written = write_kif(&record).unwrap();
    assert!(!written.contains("投了"), "{written}");
    assert_eq!(read_kif(&written).unwrap(), record);
    // A move after the summary was read as if the summary came last.
    let e = read_kif(&KIF.replace("   2 ", "まで1手で先手の勝ち\n   2 ")).unwrap_err();
    assert_eq!((e.kind, e.line, e.ply), (ErrorKind::Syntax, Some(5), Some(2)), "{e}");
}

/// Regression: an error about one token of an 8 MB line once printed the whole token. Every
/// error that quotes input text now quotes at most [`rules::EXCERPT_CHARS`] characters
/// of it, and says how long it was.
#[test]
fn errors_quote_long_input_cut_short() {
    let long = "x".repeat(1 << 20);
    let too_much = "x".repeat(rules::EXCERPT_CHARS + 1);
    let mut pos = Position::startpos(Variant::Shogi);
    let messages = [
        pos.play_usi(&long).unwrap_err().to_string(),
        pos.parse_xboard(&long).unwrap_err().to_string(),
        sfen(&format!("{long} b - 1")).unwrap_err().to_string(),
        sfen(&format!("k8/9/9/9/9/9/9/9/8K b {long} 1")).unwrap_err().to_string(),
        sfen(&format!("k8/9/9/9/9/9/9/9/8K b - {long}")).unwrap_err().to_string(),
        rules::parse_position_command(Variant::Shogi, &format!("startpos {long}")).unwrap_err().to_string(),
        long.parse::<Variant>().unwrap_err().to_string(),
        rules::records::read_usi(&format!("startpos moves 7g7f {long}")).unwrap_err().to_string(),
        rules::records::read_usi(&format!("sfen {long} b - 1")).unwrap_err().to_string(),
        rules::records::read_csa(&format!("V2.2\nPI\n+\n+{long}\n")).unwrap_err().to_string(),
        rules::records::read_kif(&format!("手合割：平手\n   1 {long}\n")).unwrap_err().to_string(),
    ];
    for m in messages {
        assert!(m.len() < 400 && !m.contains(&too_much), "{} bytes: {}", m.len(), &m[..m.len().min(400)]);
    }
}
