//! USI position lines and game records (KIF, KI2, CSA, USI files), mutated
//! from valid ones: the cshogi-written fixtures and records of random games
//! with times, comments and ends. What a reader accepts must replay, write
//! back in its format and read again to the same game, convert to every
//! other format with the same moves, and hold exactly the times the text
//! gives (nothing clamped, zeroed or dropped).

use crate::harness::{cases, fuzz, mutate, mutations, position_index, positions, random_game, Rng};
use crate::moves::spells;
use crate::sfen::plain;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rules::records::{
    encode_record, read_games, read_usi, write_csa_with, write_record, CsaVersion, Encoding, EndReason, Format,
    GameEnd, Record, MAX_MOVE_TIME,
};
use rules::{parse_position_command, parse_position_with, Handicap, Notation, Position, Variant};
use std::path::PathBuf;
use std::time::Duration;

/// The position line of the game on `pos` in `notation`: `startpos moves
/// ...`, or `sfen <start> moves ...`.
fn position_line(pos: &Position, notation: Notation) -> String {
    let mut start = pos.clone();
    let mut moves = Vec::new();
    while let Some(mv) = start.undo() {
        moves.push(mv);
    }
    let mut line = if start == Position::startpos(pos.variant()) {
        "startpos".to_string()
    } else {
        format!("sfen {}", start.to_sfen())
    };
    if !moves.is_empty() {
        line.push_str(" moves");
    }
    for &mv in moves.iter().rev() {
        line.push(' ');
        line.push_str(&start.move_text(mv, notation));
        start.play(mv);
    }
    line
}

/// The oracle for a position line: the start as the text gives it, each
/// move word the text of the move played.
fn check_position_line(variant: Variant, text: &str, notation: Notation) -> Result<bool, TestCaseError> {
    let read = parse_position_with(variant, text, notation);
    if notation == Notation::Usi && variant == Variant::Shogi {
        usi_readers_agree(text, &read)?;
    }
    let Ok(end) = read else { return Ok(false) };
    let words: Vec<&str> = text.split_whitespace().collect();
    let moves_at = words.iter().position(|&w| w == "moves").unwrap_or(words.len());
    let mut pos = end.clone();
    let mut played = Vec::new();
    while let Some(mv) = pos.undo() {
        played.push(mv);
    }
    let start_words = match words.first() {
        Some(&"startpos") => {
            prop_assert_eq!(moves_at, 1, "text after startpos: {:?}", text);
            prop_assert_eq!(&pos, &Position::startpos(variant));
            None
        }
        Some(&"sfen") => Some(words[1..moves_at].join(" ")),
        _ => Some(words[..moves_at].join(" ")),
    };
    if let Some(sfen) = start_words {
        let size = variant.size();
        prop_assert!(plain(&sfen, size).is_some(), "accepted a bad SFEN: {text:?}");
        prop_assert_eq!(plain(&sfen, size), plain(&pos.to_sfen(), size), "start read wrong: {:?}", text);
    }
    let move_words = words.get(moves_at + 1..).unwrap_or(&[]);
    prop_assert_eq!(move_words.len(), played.len(), "moves lost: {:?}", text);
    for (&word, &mv) in move_words.iter().zip(played.iter().rev()) {
        prop_assert!(spells(&pos, mv, word, notation), "{:?} played as {} in {:?}", word, mv, text);
        pos.play(mv);
    }
    Ok(true)
}

/// The USI record reader and the position command read the same shogi
/// line alike.
fn usi_readers_agree(text: &str, command: &Result<Position, rules::PositionCommandError>) -> Result<(), TestCaseError> {
    // The record reader reads a file, one game a line.
    let first = text.split_whitespace().next();
    if !matches!(first, Some("startpos" | "sfen")) || text.contains('\n') {
        return Ok(());
    }
    let record = read_usi(text);
    prop_assert_eq!(record.is_ok(), command.is_ok(), "readers disagree on {:?}", text);
    if let (Ok(record), Ok(pos)) = (record, command) {
        let moves: Vec<String> = pos.moves_played().map(|m| m.to_usi()).collect();
        prop_assert_eq!(record.usi_moves(), moves);
    }
    Ok(())
}

fn position_seed(notation: Notation) -> impl Strategy<Value = (Variant, String)> {
    position_index().prop_map(move |i| (positions()[i].variant(), position_line(&positions()[i], notation)))
}

#[test]
fn usi_position_lines() {
    for (name, notation) in [("usi", Notation::Usi), ("xboard", Notation::Xboard)] {
        let strategy = (position_seed(notation), mutations(3));
        fuzz(&format!("{name} position lines mutated"), cases(4_000), strategy, |((v, seed), edits)| {
            let text = String::from_utf8_lossy(&mutate(seed.as_bytes(), &edits)).into_owned();
            check_position_line(v, &text, notation)
        });
    }
    // The plain `parse_position_command` is the USI one.
    let line = position_line(&positions()[positions().len() - 1], Notation::Usi);
    assert_eq!(parse_position_command(positions().last().unwrap().variant(), &line).as_ref().ok(), positions().last());
}

/// A record of a random game of standard shogi from the even start, a
/// handicap or a position, with times, comments and an end.
fn random_record(rng: &mut Rng) -> Record {
    let start = match rng.below(3) {
        0 => Position::startpos(Variant::Shogi),
        1 => Handicap::ALL[rng.below(Handicap::ALL.len())].position(),
        _ => {
            let middle = random_game(Position::startpos(Variant::Shogi), rng.0, 10 + rng.below(40));
            Position::from_sfen(Variant::Shogi, &middle.to_sfen()).expect("SFEN of a game reads back")
        }
    };
    let end = random_game(start, rng.0 ^ 0x5555, rng.below(80));
    let mut record = Record::from_game(&end);
    for m in &mut record.moves {
        m.time = match rng.below(4) {
            0 => None,
            1 => Some(Duration::from_secs(rng.below(600) as u64)),
            2 => Some(Duration::from_millis(rng.below(600_000) as u64)),
            _ => Some(Duration::from_secs(rng.below(400_000) as u64)),
        };
        if rng.below(8) == 0 {
            m.comments.push(format!("comment {} 評価値 -110", rng.below(1000)));
        }
    }
    if record.end.is_none() && rng.below(2) == 0 {
        let reasons = [EndReason::Resign, EndReason::TimeUp, EndReason::Abort, EndReason::IllegalMove];
        let mut game_end = GameEnd::at(reasons[rng.below(reasons.len())], &end);
        game_end.time = Some(Duration::from_secs(rng.below(100) as u64));
        record.end = Some(game_end);
    }
    record.info.sente = Some("先手 A".into());
    record.info.gote = Some("gote, B".into());
    record
}

/// Valid record files: the fixtures, and random games in every readable
/// format (KIF and KI2 in both encodings, CSA in both versions).
fn seed_files() -> &'static [(Format, Vec<u8>)] {
    static FILES: std::sync::OnceLock<Vec<(Format, Vec<u8>)>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/records");
        let mut files: Vec<(Format, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter_map(|p| {
                let format = Format::from_extension(p.extension()?.to_str()?)?;
                Some((format, std::fs::read(&p).unwrap()))
            })
            .collect();
        files.sort_by(|a, b| a.1.cmp(&b.1));
        let mut rng = Rng(0xC0FF_EE00_1234_5678);
        for i in 0..60 {
            let record = random_record(&mut rng);
            let (format, text) = match i % 5 {
                0 => (Format::Kif, write_record(Format::Kif, &record)),
                1 => (Format::Ki2, write_record(Format::Ki2, &record)),
                2 => (Format::Csa, write_csa_with(&record, CsaVersion::V22)),
                3 => (Format::Csa, write_csa_with(&record, CsaVersion::V30)),
                _ => (Format::Usi, write_record(Format::Usi, &record)),
            };
            let encoding = if i % 2 == 0 { Encoding::Utf8 } else { Encoding::ShiftJis };
            let bytes = encode_record(format, &text.expect("random records write"), encoding).expect("encodes");
            files.push((format, bytes));
        }
        files
    })
}

/// Writes a game as `format` and reads it back.
fn rewrite(format: Format, game: &Record) -> Result<Record, String> {
    let text = match format {
        Format::Csa => write_csa_with(game, CsaVersion::V30),
        f => write_record(f, game),
    };
    let text = text.map_err(|e| format!("writing {}: {e}", format.name()))?;
    let mut games = read_games(format, text.as_bytes(), None).map_err(|e| format!("{e}\n{text}"))?;
    if games.len() != 1 {
        return Err(format!("{} games in\n{text}", games.len()));
    }
    Ok(games.remove(0))
}

/// What a game reads back as after writing it in `format`. KIF gives the
/// end line of a timed game a time (0:00 where the game has none), as other
/// programs write it; but where the record's winner is not the one that
/// line would name (a summary said so), KIF writes the summary alone, which
/// has no place for a time.
fn as_rewritten(format: Format, game: &Record) -> Record {
    let mut game = game.clone();
    let timed = game.moves.iter().any(|m| m.time.is_some());
    let Ok(pos) = game.final_position() else { return game };
    if let Some(end) = game.end.as_mut().filter(|_| format == Format::Kif) {
        let line_agrees = end.reason == EndReason::IllegalMove || GameEnd::at(end.reason, &pos).winner == end.winner;
        if !line_agrees {
            end.time = None;
        } else if timed && end.time.is_none() {
            end.time = Some(Duration::ZERO);
        }
    }
    game
}

/// The moves and start of a game: what every format keeps (the start's
/// move number aside: CSA and KIF have no place for it).
fn moves_of(game: &Record) -> (String, Vec<String>) {
    let sfen = game.start.sfen();
    let key: Vec<&str> = sfen.split_whitespace().take(3).collect();
    (key.join(" "), game.usi_moves())
}

fn check_record(format: Format, bytes: &[u8]) -> Result<bool, TestCaseError> {
    let Ok(games) = read_games(format, bytes, None) else { return Ok(false) };
    let times_given = times_in_text(format, bytes);
    let times_read: Vec<Duration> = games
        .iter()
        .flat_map(|g| g.moves.iter().map(|m| m.time).chain(g.end.iter().map(|e| e.time)))
        .flatten()
        .collect();
    if let Some(given) = times_given {
        prop_assert_eq!(given, times_read.clone(), "times read are not the times written");
    }
    for game in &games {
        prop_assert!(times_read.iter().all(|&t| t <= MAX_MOVE_TIME));
        game.final_position().map_err(|e| TestCaseError::fail(format!("accepted game does not replay: {e}")))?;
        let again = rewrite(format, game).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&again, &as_rewritten(format, game), "{} written and read back differs", format.name());
        for other in Format::ALL.into_iter().filter(|f| f.readable() && *f != format) {
            let converted = rewrite(other, game).map_err(TestCaseError::fail)?;
            prop_assert_eq!(moves_of(&converted), moves_of(game), "converted to {}", other.name());
        }
    }
    Ok(true)
}

/// The times a record's text gives, in order, read plainly: `None` for
/// the formats without times, or text this oracle cannot follow (not
/// UTF-8: a Shift_JIS file).
fn times_in_text(format: Format, bytes: &[u8]) -> Option<Vec<Duration>> {
    let text = std::str::from_utf8(bytes).ok()?;
    match format {
        Format::Csa => csa_times(text),
        Format::Kif => kif_times(text),
        _ => None,
    }
}

/// `T` statements outside comments: whole seconds with up to three
/// decimals; `None` if any breaks that (the reader must have refused).
fn csa_times(text: &str) -> Option<Vec<Duration>> {
    let mut times = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with(['\'', 'P', 'N', '$'])) {
        for stmt in line.split(',').map(str::trim).filter(|s| s.starts_with('T')) {
            let (whole, fraction) = stmt[1..].split_once('.').unwrap_or((&stmt[1..], "000"));
            let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
            if !digits(whole) || !digits(fraction) || fraction.len() > 3 || whole.len() > 12 {
                return None;
            }
            let millis: u64 = format!("{fraction:0<3}").parse().ok()?;
            times.push(Duration::from_secs(whole.parse().ok()?) + Duration::from_millis(millis));
        }
    }
    Some(times)
}

/// Times of numbered KIF lines up to a variation: `( m:ss/h:mm:ss)`.
fn kif_times(text: &str) -> Option<Vec<Duration>> {
    let mut times = Vec::new();
    for line in text.lines() {
        if line.starts_with("変化") {
            break;
        }
        let body = line.trim_start();
        let digits = body.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || !body[digits..].starts_with([' ', '　', '\t']) {
            continue;
        }
        let body = body.trim_end_matches([' ', '　', '\t', '\r']).trim_end_matches('+').trim_end();
        let Some(inside) = body.strip_suffix(')').and_then(|b| b.rsplit_once('(')).map(|(_, i)| i) else {
            continue;
        };
        if !inside.contains([':', '/']) {
            continue;
        }
        let own = inside.split('/').next()?.trim();
        let mut secs = 0u64;
        for (i, part) in own.split(':').enumerate() {
            let ok = !part.is_empty() && part.len() <= 12 && part.chars().all(|c| c.is_ascii_digit());
            let value: u64 = if ok { part.parse().ok()? } else { return None };
            if i > 2 || (i > 0 && value > 59) {
                return None;
            }
            secs = secs * 60 + value;
        }
        times.push(Duration::from_secs(secs));
    }
    Some(times)
}

/// A failure with the input that caused it, as text.
fn with_input(e: TestCaseError, input: &[u8]) -> TestCaseError {
    TestCaseError::fail(format!("{e}\n--- input ---\n{}--- end ---", String::from_utf8_lossy(input)))
}

#[test]
fn record_files() {
    for format in [Format::Kif, Format::Ki2, Format::Csa, Format::Usi] {
        let seeds: Vec<usize> = (0..seed_files().len()).filter(|&i| seed_files()[i].0 == format).collect();
        let strategy = (prop::sample::select(seeds), mutations(3));
        fuzz(&format!("{} records mutated", format.name()), cases(2_500), strategy, |(i, edits)| {
            let bytes = mutate(&seed_files()[i].1, &edits);
            check_record(format, &bytes).map_err(|e| with_input(e, &bytes))
        });
    }
}
