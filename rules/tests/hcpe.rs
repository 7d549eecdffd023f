//! dlshogi's training data (hcpe, hcpe3) against cshogi.
//!
//! `data/hcpe/` holds files that cshogi wrote from seeded games and the text
//! cshogi reads from them (`scripts/ref/check_hcpe.py write data/hcpe`): koma
//! must read the same positions, moves, evals and results, and write the
//! same bytes. Random games check the round trips, crafted bytes the
//! errors, and when a Python with cshogi is at hand, cshogi reads what koma
//! writes.

use proptest::prelude::*;
use rules::records::hcpe::{
    self, decode_move, decode_position, encode_move, encode_position, Entry, GameResult, HcpError, HcpeError,
    Move16Error,
};
use rules::records::hcpe3::{self, Ending, Game, MoveEntry, Opponent};
use rules::{Color, Handicap, Move, Position, SfenError, Variant};
use std::path::PathBuf;
use std::process::Command;

mod support;

use support::{cshogi_python, position_key, read, read_text, repo_path, set_bits, shogi, Rng};

/// The text check_hcpe.py prints for an hcpe file.
fn entries_text(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| format!("{}\t{}\t{}\t{}\n", e.position.to_sfen(), e.best_move, e.eval, e.result.code()))
        .collect()
}

/// The text check_hcpe.py prints for an hcpe3 file.
fn games_text(games: &[Game]) -> String {
    let mut text = String::new();
    for game in games {
        let (start, n) = (game.start.to_sfen(), game.moves.len());
        text += &format!("game\t{start}\t{n}\t{}\t{}\n", game.result_code(), game.opponent.code());
        game.replay(|pos, m| {
            let candidates: Vec<String> = m.candidates.iter().map(|(mv, visits)| format!("{mv}:{visits}")).collect();
            let candidates = if candidates.is_empty() { "-".to_string() } else { candidates.join(",") };
            text += &format!("move\t{}\t{}\t{}\t{candidates}\n", pos.to_sfen(), m.mv, m.eval);
        });
    }
    text
}

fn entries_from_text(text: &str) -> Vec<Entry> {
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let position = shogi(f[0]);
            let best_move = position.parse_usi(f[1]).unwrap();
            let result = GameResult::from_code(f[3].parse().unwrap()).unwrap();
            Entry { position, best_move, eval: f[2].parse().unwrap(), result }
        })
        .collect()
}

fn games_from_text(text: &str) -> Vec<Game> {
    let mut games: Vec<Game> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f[0] == "game" {
            let code: u8 = f[3].parse().unwrap();
            games.push(Game {
                start: shogi(f[1]),
                moves: Vec::new(),
                result: GameResult::from_code(code & 3).unwrap(),
                ending: Ending::from_flag(code & !3).unwrap(),
                opponent: Opponent::from_code(f[4].parse().unwrap()).unwrap(),
            });
            continue;
        }
        let pos = shogi(f[1]);
        let candidates = match f[4] {
            "-" => Vec::new(),
            list => list
                .split(',')
                .map(|c| {
                    let (usi, visits) = c.split_once(':').unwrap();
                    (pos.parse_usi(usi).unwrap(), visits.parse().unwrap())
                })
                .collect(),
        };
        let entry = MoveEntry { mv: pos.parse_usi(f[2]).unwrap(), eval: f[3].parse().unwrap(), candidates };
        games.last_mut().unwrap().moves.push(entry);
    }
    games
}

#[test]
fn reads_cshogi_hcpe_as_cshogi_does() {
    let entries = hcpe::from_bytes(&read(&repo_path("data/hcpe/cshogi.hcpe"))).unwrap();
    assert!(entries.len() > 100);
    assert_eq!(entries_text(&entries), read_text(&repo_path("data/hcpe/cshogi.hcpe.txt")));
}

#[test]
fn writes_cshogi_hcpe_bytes() {
    let entries = entries_from_text(&read_text(&repo_path("data/hcpe/cshogi.hcpe.txt")));
    assert!(hcpe::to_bytes(&entries).unwrap() == read(&repo_path("data/hcpe/cshogi.hcpe")));
}

#[test]
fn reads_cshogi_hcpe3_as_cshogi_does() {
    let games = hcpe3::from_bytes(&read(&repo_path("data/hcpe/cshogi.hcpe3"))).unwrap();
    assert_eq!(games.len(), 3);
    assert_eq!(games[1].ending, Ending::Declaration);
    assert!(games.iter().flat_map(|g| &g.moves).any(|m| m.candidates.len() > 2));
    assert_eq!(games_text(&games), read_text(&repo_path("data/hcpe/cshogi.hcpe3.txt")));
}

#[test]
fn writes_cshogi_hcpe3_bytes() {
    let games = games_from_text(&read_text(&repo_path("data/hcpe/cshogi.hcpe3.txt")));
    assert!(hcpe3::to_bytes(&games).unwrap() == read(&repo_path("data/hcpe/cshogi.hcpe3")));
}

fn start_position(choice: usize) -> Position {
    match choice % (Handicap::ALL.len() + 2) {
        0 => Position::startpos(Variant::Shogi),
        1 => shogi("7nl/6gk1/6pp1/9/9/9/9/9/K8 b RB2G 1"),
        i => shogi(&Handicap::ALL[i - 2].sfen()),
    }
}

/// A random game from `start` (captures preferred, for hands and
/// promotions) with made-up evals and candidate visits.
fn random_game(start: Position, seed: u64, plies: usize) -> Game {
    let mut rng = Rng(seed | 1);
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let captures: Vec<Move> =
            legal.iter().copied().filter(|m| !m.is_drop() && pos.piece_at(m.to()).is_some()).collect();
        let pool = if !captures.is_empty() && rng.below(3) > 0 { &captures } else { &legal };
        let mv = pool[rng.below(pool.len())];
        let candidates =
            (0..rng.below(5)).map(|i| (legal[(i * 7 + rng.below(3)) % legal.len()], i as u16 * 900)).collect();
        let eval = rng.below(65536) as u16 as i16;
        moves.push(MoveEntry { mv, eval, candidates });
        pos.play(mv);
    }
    let result = GameResult::from_code(rng.below(3) as u8).unwrap();
    let ending = Ending::from_flag([0, 4, 8, 16][rng.below(4)]).unwrap();
    let opponent = Opponent::from_code(rng.below(3) as u8).unwrap();
    Game { start, moves, result, ending, opponent }
}

/// The positions of a game as hcpe entries, with move number 1 as read.
fn entries_of(game: &Game) -> Vec<Entry> {
    let mut entries = Vec::new();
    game.replay(|pos, m| {
        let position = shogi(&format!("{} 1", position_key(pos)));
        entries.push(Entry { position, best_move: m.mv, eval: m.eval, result: game.result });
    });
    entries
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn positions_and_moves_of_random_games_round_trip(start in 0usize..16, seed in any::<u64>()) {
        let game = random_game(start_position(start), seed, 160);
        game.replay(|pos, _| {
            let bytes = encode_position(pos).unwrap();
            let back = decode_position(&bytes).unwrap();
            assert_eq!(&back, pos, "{}", pos.to_sfen());
            assert_eq!(position_key(&back), position_key(pos));
            assert_eq!(back.move_number(), 1);
            let mut seen = std::collections::HashSet::new();
            for mv in pos.legal_moves() {
                let move16 = encode_move(mv).unwrap();
                assert!(seen.insert(move16), "{mv} shares its 16-bit form");
                assert_eq!(decode_move(move16), Ok(mv));
                assert_eq!(hcpe::decode_legal_move(pos, move16), Ok(mv));
            }
        });
    }

    #[test]
    fn files_of_random_games_round_trip(start in 0usize..16, seed in any::<u64>()) {
        let games: Vec<Game> = (0..3).map(|i| random_game(start_position(start + i), seed ^ i as u64, 120)).collect();
        let bytes = hcpe3::to_bytes(&games).unwrap();
        let back = hcpe3::from_bytes(&bytes).unwrap();
        prop_assert_eq!(games_text(&back), games_text(&games));
        prop_assert_eq!(hcpe3::to_bytes(&back).unwrap(), bytes);
        let entries: Vec<Entry> = games.iter().flat_map(entries_of).collect();
        let bytes = hcpe::to_bytes(&entries).unwrap();
        prop_assert_eq!(bytes.len(), entries.len() * hcpe::ENTRY_BYTES);
        prop_assert_eq!(entries_text(&hcpe::from_bytes(&bytes).unwrap()), entries_text(&entries));
    }
}

fn hcp(sfen: &str) -> [u8; 32] {
    encode_position(&shogi(sfen)).unwrap()
}

const BARE_KINGS: &str = "4k4/9/9/9/9/9/9/9/4K4 b - 1";

#[test]
fn the_layout_is_the_documented_one() {
    // Side, kings (5i = index 44, 5a = 36), 79 empty squares: 94 bits,
    // then the box: 18 pawns `010`, ..., 2 rooks `1111010`.
    let mut expected = [0u8; 32];
    set_bits(&mut expected, 0, "0");
    set_bits(&mut expected, 1, "0011010"); // 44, least significant bit first
    set_bits(&mut expected, 8, "0010010"); // 36
    let mut at = 94;
    for (code, n) in
        [("010", 18), ("10010", 4), ("11010", 4), ("10110", 4), ("10111", 4), ("1111000", 2), ("1111010", 2)]
    {
        (0..n).for_each(|_| {
            set_bits(&mut expected, at, code);
            at += code.len();
        });
    }
    assert_eq!(at, 256);
    assert_eq!(hcp(BARE_KINGS), expected);
}

#[test]
fn bad_codes_and_bad_positions_have_their_errors() {
    let mut bytes = hcp(BARE_KINGS);
    set_bits(&mut bytes, 96, "1"); // the first box pawn `010` becomes `011`: no such code
    assert_eq!(decode_position(&bytes), Err(HcpError::InvalidCode { bit: 94 }));

    let mut bytes = hcp(BARE_KINGS);
    set_bits(&mut bytes, 1, "1000101"); // sente king on index 81
    assert_eq!(decode_position(&bytes), Err(HcpError::KingSquare { color: Color::Sente, index: 81 }));
    let mut bytes = hcp(BARE_KINGS);
    set_bits(&mut bytes, 8, "0011010"); // gote king on the sente king's square
    assert_eq!(decode_position(&bytes), Err(HcpError::KingSquare { color: Color::Gote, index: 44 }));

    let mut bytes = hcp(BARE_KINGS);
    set_bits(&mut bytes, 208, "10010"); // the first box gold becomes a fifth lance
    assert_eq!(decode_position(&bytes), Err(HcpError::PieceCount { kind: rules::Kind::Lance, found: 5, expected: 4 }));

    // Gote's pawn on 1c (bits 22-25: `1010`) turned sente's: two on file 1.
    let mut bytes = hcp(Variant::Shogi.spec().start_sfen);
    set_bits(&mut bytes, 22, "1000");
    let nifu = SfenError::DoublePawn { color: Color::Sente, file: 1 };
    assert_eq!(decode_position(&bytes), Err(HcpError::IllegalPosition(nifu)));

    // Sente in check with gote to move.
    let mut bytes = hcp("4k4/9/9/9/9/9/9/4r4/4K4 b - 1");
    set_bits(&mut bytes, 0, "1");
    assert_eq!(decode_position(&bytes), Err(HcpError::IllegalPosition(SfenError::OpponentInCheck)));

    let sho = Position::startpos(Variant::Sho);
    assert_eq!(encode_position(&sho), Err(HcpError::NotStandardShogi(Variant::Sho)));
}

fn cshogi_hcpe() -> Vec<u8> {
    read(&repo_path("data/hcpe/cshogi.hcpe"))
}

#[test]
fn hcpe_errors_name_the_offset_and_reading_goes_on() {
    let mut bytes = cshogi_hcpe()[..4 * 38].to_vec();
    bytes[38 + 34..38 + 36].copy_from_slice(&(58u16 | 60 << 7).to_le_bytes()); // 7g7e
    bytes[2 * 38 + 36] = 3;
    bytes[3 * 38 + 34..3 * 38 + 36].copy_from_slice(&0u16.to_le_bytes());
    bytes.extend_from_slice(&cshogi_hcpe()[..20]);
    let items: Vec<_> = hcpe::Reader::new(&bytes[..]).collect();
    assert_eq!(items.len(), 5);
    assert!(items[0].is_ok());
    let Err(HcpeError::Move { offset: 72, reason: Move16Error::Illegal { usi, .. } }) = &items[1] else {
        panic!("{:?}", items[1]);
    };
    assert_eq!(usi, "7g7e");
    assert!(matches!(items[2], Err(HcpeError::GameResult { offset: 112, value: 3 })));
    assert!(matches!(items[3], Err(HcpeError::Move { offset: 148, reason: Move16Error::NotAMove(0) })));
    assert!(matches!(items[4], Err(HcpeError::Truncated { offset: 152, needed: 38, found: 20, .. })));
    assert_eq!(
        items[4].as_ref().unwrap_err().to_string(),
        "byte 152: the data ends inside an hcpe record (20 of 38 bytes)"
    );
}

#[test]
fn writers_refuse_illegal_moves() {
    let position = Position::startpos(Variant::Shogi);
    let illegal = Move::Normal { from: rules::Square::new(7, 7), to: rules::Square::new(7, 5), promote: false };
    let entry = Entry { position: position.clone(), best_move: illegal, eval: 0, result: GameResult::Draw };
    let err = hcpe::to_bytes(&[entry]).unwrap_err();
    assert!(matches!(err, HcpeError::Move { offset: 34, reason: Move16Error::Illegal { .. } }), "{err}");

    let mut game = random_game(position, 7, 6);
    game.moves[4].candidates.push((illegal, 3));
    let err = hcpe3::to_bytes(&[game]).unwrap_err();
    assert!(matches!(err, HcpeError::Move { reason: Move16Error::Illegal { .. }, .. }), "{err}");
}

#[test]
fn hcpe3_errors_name_the_offset_and_reading_goes_on() {
    let games = hcpe3::from_bytes(&read(&repo_path("data/hcpe/cshogi.hcpe3"))).unwrap();
    let game = Game { moves: games[0].moves[..3].to_vec(), ..games[0].clone() };
    assert!(!game.moves[2].candidates.is_empty(), "the last move has candidates to cut");
    let one = hcpe3::to_bytes(std::slice::from_ref(&game)).unwrap();
    // Header 36, then move 1 at 36 with its candidates at 42, 46, ...
    let first_candidates = game.moves[0].candidates.len();
    let second_move = 36 + 6 + 4 * first_candidates as u64;

    let mut bad = one.clone();
    bad[second_move as usize..second_move as usize + 2].copy_from_slice(&(58u16 | 60 << 7).to_le_bytes());
    let mut stream = [bad.clone(), one.clone(), one[..one.len() - 2].to_vec()].concat();
    let items: Vec<_> = hcpe3::Reader::new(&stream[..]).collect();
    assert_eq!(items.len(), 3);
    assert!(matches!(&items[0], Err(HcpeError::Move { offset, .. }) if *offset == second_move));
    assert_eq!(items[1].as_ref().unwrap(), &game);
    let last_candidate = 2 * one.len() as u64 + one.len() as u64 - 4;
    let Err(HcpeError::Truncated { offset, what, found, .. }) = &items[2] else { panic!("{:?}", items[2]) };
    assert_eq!((*offset, *what, *found), (last_candidate, "an hcpe3 candidate", 2));

    stream = one.clone();
    stream[34] = 12; // two ending flags
    assert!(matches!(hcpe3::from_bytes(&stream), Err(HcpeError::Field { offset: 34, what: "game result", value: 12 })));
    stream[34] = 3;
    assert!(matches!(hcpe3::from_bytes(&stream), Err(HcpeError::GameResult { offset: 34, value: 3 })));
    stream = one.clone();
    stream[35] = 3;
    assert!(matches!(hcpe3::from_bytes(&stream), Err(HcpeError::Field { offset: 35, what: "opponent", value: 3 })));
}

fn temp_dir(name: &str) -> PathBuf {
    support::temp_dir(&format!("hcpe-{name}"))
}

#[test]
fn files_are_saved_and_opened() {
    let dir = temp_dir("save");
    let games: Vec<Game> = (0..2).map(|i| random_game(start_position(i), 11 + i as u64, 30)).collect();
    let entries: Vec<Entry> = games.iter().flat_map(entries_of).collect();
    hcpe::save(&dir.join("a.hcpe"), &entries).unwrap();
    hcpe3::save(&dir.join("a.hcpe3"), &games).unwrap();
    let read_entries: Vec<Entry> = hcpe::Reader::open(&dir.join("a.hcpe")).unwrap().map(Result::unwrap).collect();
    let read_games: Vec<Game> = hcpe3::Reader::open(&dir.join("a.hcpe3")).unwrap().map(Result::unwrap).collect();
    assert_eq!(read_entries, entries);
    assert_eq!(games_text(&read_games), games_text(&games));
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
    let missing = hcpe::Reader::open(&dir.join("missing.hcpe")).err().unwrap();
    assert!(missing.to_string().contains("missing.hcpe"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Python that has cshogi: `KOMA_CSHOGI_PYTHON`, else the repository's
/// `.venv` (scripts/install-engines.sh puts cshogi there).

#[test]
fn cshogi_reads_what_koma_writes() {
    let Some(python) = cshogi_python() else { return };
    let dir = temp_dir("cshogi");
    let games: Vec<Game> = (0..14).map(|i| random_game(start_position(i), 1000 + i as u64, 150)).collect();
    let entries: Vec<Entry> = games.iter().flat_map(entries_of).collect();
    hcpe::save(&dir.join("koma.hcpe"), &entries).unwrap();
    hcpe3::save(&dir.join("koma.hcpe3"), &games).unwrap();
    for (file, expected) in [("koma.hcpe", entries_text(&entries)), ("koma.hcpe3", games_text(&games))] {
        let out = Command::new(&python)
            .arg(repo_path("scripts/ref/check_hcpe.py"))
            .arg("read")
            .arg(dir.join(file))
            .output()
            .unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let first_difference = text.lines().zip(expected.lines()).find(|(a, b)| a != b);
        assert_eq!(first_difference, None, "{file}: cshogi read (left) differs from koma (right)");
        assert_eq!(text, expected, "{file}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
