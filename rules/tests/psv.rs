//! YaneuraOu's PackedSfenValue (psv) files against cshogi.
//!
//! `data/psv/` holds a file that cshogi wrote from seeded games and the text cshogi reads
//! from it (`scripts/ref/check_psv.py write data/psv`): koma must read the same positions,
//! moves, scores, plies and results, and write the same bytes. Random games check the
//! round trips, crafted bytes the errors, and when a Python with cshogi is at hand,
//! cshogi writes the positions of 10,000 random-game positions byte for byte as koma does
//! and reads what koma writes.

use proptest::prelude::*;
use rules::records::psv::{
    self, decode_legal_move, decode_move, decode_position, encode_move, encode_position, Entry, GameResult, PsfenError,
    PsvError, ENTRY_BYTES,
};
use rules::records::{hcpe::Move16Error, read_usi_games};
use rules::{Color, Handicap, Kind, Move, Position, SfenError, Square, Variant};
use std::path::PathBuf;
use std::process::Command;

mod support;

use support::{cshogi_python, position_key, read, read_text, repo_path, set_bits, shogi, Rng};

/// The text check_psv.py prints for a psv file.
fn entries_text(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| {
            let key = position_key(&e.position);
            format!("{key}\t{}\t{}\t{}\t{}\n", e.best_move, e.score, e.game_ply, e.result.code())
        })
        .collect()
}

fn entries_from_text(text: &str) -> Vec<Entry> {
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let game_ply: u16 = f[3].parse().unwrap();
            let position = shogi(&format!("{} {}", f[0], game_ply.max(1)));
            let best_move = position.parse_usi(f[1]).unwrap();
            let result = GameResult::from_code(f[4].parse().unwrap()).unwrap();
            Entry { position, best_move, score: f[2].parse().unwrap(), game_ply, result }
        })
        .collect()
}

const BARE_KINGS: &str = "4k4/9/9/9/9/9/9/9/4K4 b - 1";
const FULL_HANDS: &str = "4k4/9/9/9/9/9/9/9/4K4 b RB2G2S2N2L9Prb2g2s2n2l9p 1";
const SPARSE: &str = "7nl/6gk1/6pp1/9/9/9/9/9/K8 b RB2G 1";

fn start_position(choice: usize, rng: &mut Rng) -> Position {
    match choice % (Handicap::ALL.len() + 4) {
        0 => Position::startpos(Variant::Shogi),
        1 => shogi(SPARSE),
        2 => shogi(FULL_HANDS),
        3 => {
            // A middle game: its pieces in hand and promoted.
            let mut pos = Position::startpos(Variant::Shogi);
            let plies = 30 + rng.below(60);
            play_random(&mut pos, rng, plies, |_, _| {});
            pos
        }
        i => shogi(&Handicap::ALL[i - 4].sfen()),
    }
}

/// Plays up to `plies` random legal moves (captures preferred, for hands and
/// promotions), calling `visit` with the position before each.
fn play_random(pos: &mut Position, rng: &mut Rng, plies: usize, mut visit: impl FnMut(&Position, Move)) {
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let captures: Vec<Move> =
            legal.iter().copied().filter(|m| !m.is_drop() && pos.piece_at(m.to()).is_some()).collect();
        let pool = if !captures.is_empty() && rng.below(3) > 0 { &captures } else { &legal };
        let mv = pool[rng.below(pool.len())];
        visit(pos, mv);
        pos.play(mv);
    }
}

/// Every position of a random game as psv entries: made-up scores, the position's
/// move number as the ply, one winner for the game.
fn random_entries(start: Position, rng: &mut Rng, plies: usize) -> Vec<Entry> {
    let winner = [None, Some(Color::Sente), Some(Color::Gote)][rng.below(3)];
    let mut entries = Vec::new();
    let mut pos = start;
    let mut scores = Rng(rng.0 ^ 0x9E37_79B9_7F4A_7C15);
    play_random(&mut pos, rng, plies, |p, mv| {
        entries.push(Entry {
            position: p.clone(),
            best_move: mv,
            score: scores.below(65536) as u16 as i16,
            game_ply: p.move_number().min(65535) as u16,
            result: GameResult::for_side(winner, p.side_to_move()),
        })
    });
    entries
}

#[test]
fn reads_cshogi_psv_as_cshogi_does() {
    let entries = psv::from_bytes(&read(&repo_path("data/psv/cshogi.psv"))).unwrap();
    assert_eq!(entries.len(), 170);
    assert!(entries.iter().any(|e| e.best_move.is_drop()) && entries.iter().any(|e| e.best_move.is_promotion()));
    assert_eq!(entries_text(&entries), read_text(&repo_path("data/psv/cshogi.psv.txt")));
    // The ply comes back as the position's move number.
    assert!(entries.iter().all(|e| e.position.move_number() == e.game_ply as u32));
}

#[test]
fn writes_cshogi_psv_bytes() {
    let entries = entries_from_text(&read_text(&repo_path("data/psv/cshogi.psv.txt")));
    assert!(psv::to_bytes(&entries).unwrap() == read(&repo_path("data/psv/cshogi.psv")));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn positions_and_moves_of_random_games_round_trip(start in 0usize..20, seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let entries = random_entries(start_position(start, &mut rng), &mut rng, 160);
        for e in &entries {
            let pos = &e.position;
            let bytes = encode_position(pos).unwrap();
            let back = decode_position(&bytes).unwrap();
            prop_assert_eq!(position_key(&back), position_key(pos));
            prop_assert_eq!(back.move_number(), 1);
            let mut seen = std::collections::HashSet::new();
            for mv in pos.legal_moves() {
                let move16 = encode_move(mv).unwrap();
                prop_assert!(seen.insert(move16), "{} shares its 16-bit form", mv);
                prop_assert_eq!(decode_move(move16), Ok(mv));
                prop_assert_eq!(decode_legal_move(pos, move16), Ok(mv));
            }
        }
        let bytes = psv::to_bytes(&entries).unwrap();
        prop_assert_eq!(bytes.len(), entries.len() * ENTRY_BYTES);
        let back = psv::from_bytes(&bytes).unwrap();
        prop_assert_eq!(entries_text(&back), entries_text(&entries));
        prop_assert_eq!(psv::to_bytes(&back).unwrap(), bytes);
    }
}

#[test]
fn plies_and_results_keep_their_range() {
    let position = Position::startpos(Variant::Shogi);
    let best_move = position.parse_usi("7g7f").unwrap();
    for (game_ply, score, result) in
        [(0, i16::MIN, GameResult::Loss), (65535, i16::MAX, GameResult::Draw), (1, 0, GameResult::Win)]
    {
        let entry = Entry { position: position.clone(), best_move, score, game_ply, result };
        let bytes = psv::to_bytes(std::slice::from_ref(&entry)).unwrap();
        assert_eq!(bytes[36..38], game_ply.to_le_bytes());
        assert_eq!(bytes[38] as i8, result.code());
        assert_eq!(bytes[39], 0, "padding");
        let back = psv::from_bytes(&bytes).unwrap().remove(0);
        assert_eq!(back, entry);
        assert_eq!(back.position.move_number(), game_ply.max(1) as u32);
    }
}

fn psfen(sfen: &str) -> [u8; 32] {
    encode_position(&shogi(sfen)).unwrap()
}

/// The piece box of the bare kings, in order: (code, count).
const BOX: [(&str, usize); 7] =
    [("010", 18), ("10010", 4), ("10110", 4), ("11010", 4), ("11011", 4), ("1111010", 2), ("1111110", 2)];

/// Bare kings' bytes with the box codes from bit 94 as given.
fn bare_kings_with_box(boxed: &[(&str, usize)]) -> ([u8; 32], usize) {
    let mut bytes = [0u8; 32];
    set_bits(&mut bytes, 0, "0");
    set_bits(&mut bytes, 1, "0011010"); // 5i = 44, least significant bit first
    set_bits(&mut bytes, 8, "0010010"); // 5a = 36
    let mut at = 94; // 15 bits, then 79 empty squares
    for &(code, n) in boxed {
        (0..n).for_each(|_| at = set_bits(&mut bytes, at, code));
    }
    (bytes, at)
}

#[test]
fn the_layout_is_the_documented_one() {
    let (expected, end) = bare_kings_with_box(&BOX);
    assert_eq!(end, 256);
    assert_eq!(psfen(BARE_KINGS), expected);
    // The start position: 7g7f moves sente's pawn from square index 60 to 59.
    let start = psfen(Variant::Shogi.spec().start_sfen);
    assert_eq!(hex(&start), "58a451220ceb67227e9653221caf447824c22b119e53221ceb6f223e9651220c", "cshogi's to_psfen");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn bad_codes_and_bad_positions_have_their_errors() {
    let mut bytes = psfen(BARE_KINGS);
    set_bits(&mut bytes, 94, "011"); // no code starts `011`
    assert_eq!(decode_position(&bytes), Err(PsfenError::InvalidCode { bit: 94 }));

    // A box gold (bit 208) turned a box lance: five lances.
    let mut bytes = psfen(BARE_KINGS);
    set_bits(&mut bytes, 208, "10010");
    assert_eq!(decode_position(&bytes), Err(PsfenError::PieceCount { kind: Kind::Lance, found: 5, expected: 4 }));

    // One box pawn fewer leaves 3 bits, where a rook's code begins: it does not fit.
    let mut boxed = BOX;
    boxed[0].1 = 17;
    let (mut bytes, end) = bare_kings_with_box(&boxed);
    assert_eq!(end, 253);
    set_bits(&mut bytes, 253, "111");
    assert_eq!(decode_position(&bytes), Err(PsfenError::PastTheEnd { bit: 253 }));
    // The same bits left as `000` are a sente pawn in hand: a legal position.
    set_bits(&mut bytes, 253, "000");
    assert_eq!(position_key(&decode_position(&bytes).unwrap()), "4k4/9/9/9/9/9/9/9/4K4 b P");
    // Rooks on the first squares: the third is one too many, said as soon as it is read.
    let mut bytes = psfen(BARE_KINGS);
    (0..30).for_each(|i| {
        set_bits(&mut bytes, 15 + 8 * i, "11111100");
    });
    assert!(matches!(decode_position(&bytes), Err(PsfenError::PieceCount { kind: Kind::Rook, found: 3, .. })));

    let mut bytes = psfen(BARE_KINGS);
    set_bits(&mut bytes, 1, "1000101"); // sente king on index 81
    assert_eq!(decode_position(&bytes), Err(PsfenError::KingSquare { color: Color::Sente, index: 81 }));
    let mut bytes = psfen(BARE_KINGS);
    set_bits(&mut bytes, 8, "0011010"); // gote king on the sente king's square
    assert_eq!(decode_position(&bytes), Err(PsfenError::KingSquare { color: Color::Gote, index: 44 }));

    // Gote's pawn on 1a (square index 0, the first code, at bit 15: `10` `0` `1`)
    // turned sente's: a pawn on its last rank.
    let mut bytes = psfen("4k3p/9/9/9/9/9/9/9/4K4 b - 1");
    set_bits(&mut bytes, 18, "0");
    let Err(PsfenError::IllegalPosition(e)) = decode_position(&bytes) else { panic!() };
    assert!(matches!(e, SfenError::DeadPiece { .. }), "{e}");

    // Gote's pawn on 1c turned sente's: two on file 1.
    // 1a's lance takes bits 15-20, 1b is empty (21), 1c's pawn is `10` `0` `1` from 22.
    let mut bytes = psfen(Variant::Shogi.spec().start_sfen);
    set_bits(&mut bytes, 25, "0");
    let nifu = SfenError::DoublePawn { color: Color::Sente, file: 1 };
    assert_eq!(decode_position(&bytes), Err(PsfenError::IllegalPosition(nifu)));

    // Sente in check with gote to move.
    let mut bytes = psfen("4k4/9/9/9/9/9/9/4r4/4K4 b - 1");
    set_bits(&mut bytes, 0, "1");
    assert_eq!(decode_position(&bytes), Err(PsfenError::IllegalPosition(SfenError::OpponentInCheck)));

    let sho = Position::startpos(Variant::Sho);
    assert_eq!(encode_position(&sho), Err(PsfenError::NotStandardShogi(Variant::Sho)));
    assert!(encode_position(&sho).unwrap_err().to_string().contains("standard shogi"));
}

fn cshogi_psv() -> Vec<u8> {
    read(&repo_path("data/psv/cshogi.psv"))
}

#[test]
fn errors_name_the_offset_and_reading_goes_on() {
    let n = ENTRY_BYTES;
    let mut bytes = cshogi_psv()[..5 * n].to_vec();
    bytes[n + 34..n + 36].copy_from_slice(&(58u16 | 60 << 7).to_le_bytes()); // 7g7e
    bytes[2 * n + 38] = 2;
    bytes[3 * n + 34..3 * n + 36].copy_from_slice(&0u16.to_le_bytes());
    bytes[4 * n + 4] ^= 0xff;
    bytes.extend_from_slice(&cshogi_psv()[..20]);
    let items: Vec<_> = psv::Reader::new(&bytes[..]).collect();
    assert_eq!(items.len(), 6);
    assert!(items[0].is_ok());
    let Err(PsvError::Move { offset: 74, reason: Move16Error::Illegal { usi, .. } }) = &items[1] else {
        panic!("{:?}", items[1]);
    };
    assert_eq!(usi, "7g7e");
    assert!(matches!(items[2], Err(PsvError::GameResult { offset: 118, value: 2 })));
    assert!(matches!(items[3], Err(PsvError::Move { offset: 154, reason: Move16Error::NotAMove(0) })));
    assert!(matches!(items[4], Err(PsvError::Position { offset: 160, .. })), "{:?}", items[4]);
    assert!(matches!(items[5], Err(PsvError::Truncated { offset: 200, found: 20 })));
    assert_eq!(
        items[5].as_ref().unwrap_err().to_string(),
        "byte 200: the data ends inside a psv record (20 of 40 bytes)"
    );
    assert!(items[2].as_ref().unwrap_err().to_string().starts_with("byte 118: game result 2 is not 1"));
    // from_bytes stops at the first error.
    assert!(matches!(psv::from_bytes(&bytes), Err(PsvError::Move { offset: 74, .. })));
    // A file cut anywhere reads its whole records, then says where it was cut.
    let whole = cshogi_psv();
    for cut in [1, 39, 41, 79, whole.len() - 1] {
        let items: Vec<_> = psv::Reader::new(&whole[..cut]).collect();
        assert_eq!(items.len(), cut / n + 1);
        assert!(items[..cut / n].iter().all(Result::is_ok));
        let offset = (cut / n * n) as u64;
        assert!(matches!(items.last(), Some(Err(PsvError::Truncated { offset: o, found }))
            if *o == offset && *found == cut % n));
    }
    assert!(psv::from_bytes(&[]).unwrap().is_empty());
}

#[test]
fn writers_refuse_illegal_moves_and_other_variants() {
    let position = Position::startpos(Variant::Shogi);
    let illegal = Move::Normal { from: Square::new(7, 7), to: Square::new(7, 5), promote: false };
    let entry = Entry { position, best_move: illegal, score: 0, game_ply: 1, result: GameResult::Draw };
    let good = Entry { best_move: entry.position.parse_usi("7g7f").unwrap(), ..entry.clone() };
    let err = psv::to_bytes(&[good.clone(), entry]).unwrap_err();
    assert!(matches!(err, PsvError::Move { offset: 74, reason: Move16Error::Illegal { .. } }), "{err}");

    let sho = Position::startpos(Variant::Sho);
    let best_move = sho.legal_moves()[0];
    let entry = Entry { position: sho, best_move, score: 0, game_ply: 1, result: GameResult::Draw };
    let err = psv::to_bytes(&[good, entry]).unwrap_err();
    assert!(matches!(err, PsvError::Position { offset: 40, reason: PsfenError::NotStandardShogi(Variant::Sho) }));
}

#[test]
fn records_become_entries_and_back() {
    let text = "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e\nsfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 41 moves G*5b\n";
    let records = read_usi_games(text).unwrap();
    let entries: Vec<Entry> = records.iter().flat_map(|r| psv::entries_of_record(r).unwrap()).collect();
    assert_eq!(entries.len(), 6);
    assert_eq!(entries.iter().map(|e| e.game_ply).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 41]);
    // No result in the first: a draw. The second is a mate by sente, to move.
    assert!(entries[..5].iter().all(|e| e.result == GameResult::Draw));
    assert_eq!((entries[5].result, entries[5].winner()), (GameResult::Win, Some(Color::Sente)));
    let bytes = psv::to_bytes(&entries).unwrap();
    let games = psv::records_of_entries(&psv::from_bytes(&bytes).unwrap());
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].usi_moves(), ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]);
    assert_eq!(games[1].usi_moves(), ["G*5b"]);
    assert_eq!(games[1].start.sfen(), "4k4/9/4P4/9/9/9/9/9/4K4 b G 41");
    assert_eq!(games[1].end.as_ref().map(|e| e.winner), Some(Some(Color::Sente)));
}

fn temp_dir(name: &str) -> PathBuf {
    support::temp_dir(&format!("psv-{name}"))
}

#[test]
fn files_are_saved_and_opened() {
    let dir = temp_dir("save");
    let mut rng = Rng(77);
    let entries = random_entries(start_position(2, &mut rng), &mut rng, 50);
    psv::save(&dir.join("a.psv"), &entries).unwrap();
    assert_eq!(psv::load(&dir.join("a.psv")).unwrap(), entries);
    let read_back: Vec<Entry> = psv::Reader::open(&dir.join("a.psv")).unwrap().map(Result::unwrap).collect();
    assert_eq!(entries_text(&read_back), entries_text(&entries));
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary files left: {names:?}");
    let missing = psv::Reader::open(&dir.join("missing.psv")).err().unwrap();
    assert!(missing.to_string().contains("missing.psv"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 10,000 positions of random games (every start above: even, handicaps with their
/// piece box, a sparse problem, both hands full, middle games; captures preferred, so
/// hands, drops and promotions): cshogi writes each position and move byte for byte as
/// koma does, and reads koma's file as koma meant it.
#[test]
fn cshogi_writes_the_bytes_koma_writes() {
    let Some(python) = cshogi_python() else { return };
    let dir = temp_dir("cshogi");
    let mut rng = Rng(0x5053_5600_0000_0001);
    let mut entries = Vec::new();
    let mut game = 0;
    while entries.len() < 10_000 {
        let start = start_position(game, &mut rng);
        let plies = 40 + rng.below(200);
        entries.extend(random_entries(start, &mut rng, plies));
        game += 1;
    }
    entries.truncate(10_000);
    assert!(entries.iter().filter(|e| e.best_move.is_drop()).count() > 500);
    assert!(entries.iter().filter(|e| e.best_move.is_promotion()).count() > 200);
    let full_hands = |e: &&Entry| Color::BOTH.iter().all(|&c| e.position.hand(c, Kind::Pawn) >= 5);
    assert!(entries.iter().filter(full_hands).count() > 100);
    let text = entries_text(&entries);
    std::fs::write(dir.join("positions.txt"), &text).unwrap();
    psv::save(&dir.join("koma.psv"), &entries).unwrap();
    let out = Command::new(&python)
        .arg(repo_path("scripts/ref/check_psv.py"))
        .arg("encode")
        .arg(dir.join("positions.txt"))
        .arg(dir.join("cshogi.psv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (koma, cshogi) = (read(&dir.join("koma.psv")), read(&dir.join("cshogi.psv")));
    assert_eq!(cshogi.len(), 10_000 * ENTRY_BYTES);
    let same = koma.chunks(ENTRY_BYTES).zip(cshogi.chunks(ENTRY_BYTES)).filter(|(a, b)| a == b).count();
    eprintln!("{same} of {} positions byte-identical to cshogi's psv records ({game} games)", entries.len());
    let first = koma.chunks(ENTRY_BYTES).zip(cshogi.chunks(ENTRY_BYTES)).position(|(a, b)| a != b);
    assert_eq!(first.map(|i| text.lines().nth(i).unwrap().to_string()), None, "first position written otherwise");
    assert_eq!(same, 10_000);
    // koma reads cshogi's file; cshogi reads koma's.
    assert_eq!(entries_text(&psv::from_bytes(&cshogi).unwrap()), text);
    let out =
        Command::new(&python).arg(repo_path("scripts/ref/check_psv.py")).arg("read").arg(dir.join("koma.psv")).output();
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap() == text, "cshogi reads koma's psv otherwise");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Damaged files never panic: cshogi's file with bits flipped, bytes set and the data
/// cut; whatever still reads writes back and reads again to the same entries.
#[test]
fn damaged_files_read_without_panics() {
    let good = cshogi_psv();
    let mut rng = Rng(0xDA3A_6ED0_0000_0001);
    let (mut accepted, mut refused) = (0, 0);
    for case in 0..1000 {
        let mut bytes = good.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(bytes.len());
            match rng.below(3) {
                0 => bytes[i] ^= 1 << rng.below(8),
                1 => bytes[i] = rng.below(256) as u8,
                _ => bytes[i] = [0, 0xff][rng.below(2)],
            }
        }
        if case % 10 == 0 {
            bytes.truncate(rng.below(bytes.len()));
        }
        for item in psv::Reader::new(&bytes[..]) {
            match item {
                Ok(entry) => {
                    accepted += 1;
                    let again = psv::to_bytes(std::slice::from_ref(&entry)).unwrap();
                    assert_eq!(psv::from_bytes(&again).unwrap(), vec![entry]);
                }
                Err(e) => {
                    refused += 1;
                    assert!(e.to_string().starts_with("byte "), "{e}");
                }
            }
        }
    }
    eprintln!("damaged files: {accepted} records accepted, {refused} refused");
    assert!(refused > 500 && accepted > 50_000);
}
