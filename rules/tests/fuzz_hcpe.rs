//! Fuzzing dlshogi's hcpe and hcpe3 readers and the games read back from them
//! (`koma convert --from hcpe/hcpe3`): cshogi's files and files of random games, mutated
//! byte by byte (bits flipped, bytes set, inserted, deleted, the data cut short, records
//! copied or swapped) and in their fields (results, move codes, hcpe3's move and
//! candidate counts set to 0, 1, their neighbours and 65535). No reader may panic or
//! hang, the streaming readers end, and what is accepted means what it says: it writes
//! back and reads again to the same entries or games, its games (a run of consecutive
//! positions) give back the same positions, moves and results, and written as CSA and
//! KIF they read back to the same game. `cargo test --release -p koma-rules --test
//! fuzz_hcpe -- --nocapture` prints the counts; `KOMA_FUZZ_CASES=<n>` runs n inputs a
//! surface.

#[path = "fuzz/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "support/mod.rs"]
mod support;

use harness::{cases, fuzz, Rng};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rules::records::hcpe::{self, entries_of_record, hcpe3, record_of_game, records_of_entries, Entry, GameResult};
use rules::records::hcpe3::{Ending, Game, MoveEntry, Opponent};
use rules::records::{read_games, write_csa_with, write_record, CsaVersion, EndReason, Format, GameEnd, Record};
use rules::{Color, Handicap, Move, Position, Variant};

/// A random game from `start` with made-up evals, candidates and an end.
fn random_game(start: Position, rng: &mut Rng, plies: usize) -> Game {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() || pos.repetition().is_some() {
            break;
        }
        let captures: Vec<Move> =
            legal.iter().copied().filter(|m| !m.is_drop() && pos.piece_at(m.to()).is_some()).collect();
        let pool = if !captures.is_empty() && rng.below(3) > 0 { &captures } else { &legal };
        let mv = pool[rng.below(pool.len())];
        let candidates: Vec<(Move, u16)> =
            (0..rng.below(4)).map(|i| (legal[(i * 7 + rng.below(3)) % legal.len()], i as u16 * 900)).collect();
        moves.push(MoveEntry { mv, eval: rng.below(65536) as u16 as i16, candidates });
        pos.play(mv);
    }
    Game {
        start,
        moves,
        result: GameResult::from_code(rng.below(3) as u8).unwrap(),
        ending: Ending::from_flag([0, 4, 8, 16][rng.below(4)]).unwrap(),
        opponent: Opponent::from_code(rng.below(3) as u8).unwrap(),
    }
}

fn start_position(rng: &mut Rng) -> Position {
    let sfen = match rng.below(4) {
        0 => Variant::Shogi.spec().start_sfen.to_string(),
        1 => "7nl/6gk1/6pp1/9/9/9/9/9/K8 b RB2G 1".to_string(),
        2 => Handicap::ALL[rng.below(Handicap::ALL.len())].sfen(),
        _ => {
            let middle = harness::random_game(Position::startpos(Variant::Shogi), rng.0, 20 + rng.below(60));
            middle.to_sfen()
        }
    };
    Position::from_sfen(Variant::Shogi, &sfen).unwrap()
}

/// Valid files: cshogi's, and files of random games (hcpe: every position of a few
/// games, in order, each with its game's result).
fn seeds(hcpe3_files: bool) -> &'static [Vec<u8>] {
    static SEEDS: std::sync::OnceLock<[Vec<Vec<u8>>; 2]> = std::sync::OnceLock::new();
    let all = SEEDS.get_or_init(|| {
        let mut rng = Rng(0x4C50_E000_0000_0001);
        let (mut plain, mut three) = (vec![read("data/hcpe/cshogi.hcpe")], vec![read("data/hcpe/cshogi.hcpe3")]);
        for _ in 0..24 {
            let games: Vec<Game> = (0..1 + rng.below(3))
                .map(|_| {
                    let (start, plies) = (start_position(&mut rng), 1 + rng.below(40));
                    random_game(start, &mut rng, plies)
                })
                .collect();
            three.push(hcpe3::to_bytes(&games).unwrap());
            let entries: Vec<Entry> = games.iter().flat_map(entries_of).collect();
            plain.push(hcpe::to_bytes(&entries).unwrap());
        }
        [plain, three]
    });
    &all[hcpe3_files as usize]
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(support::repo_path(path)).unwrap()
}

/// A game's positions as hcpe entries, with its result.
fn entries_of(game: &Game) -> Vec<Entry> {
    let mut out = Vec::new();
    game.replay(|pos, m| out.push(Entry { position: pos.clone(), best_move: m.mv, eval: m.eval, result: game.result }));
    out
}

/// One edit of a binary file.
#[derive(Clone, Debug)]
struct Edit {
    op: u8,
    at: u32,
    value: u32,
}

fn edits(max: usize) -> impl Strategy<Value = Vec<Edit>> {
    let one = (0u8..9, any::<u32>(), any::<u32>()).prop_map(|(op, at, value)| Edit { op, at, value });
    prop::collection::vec(one, 1..=max)
}

/// Values a 16-bit count or code meets at its edges.
const EDGE_U16: [u16; 7] = [0, 1, 2, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF];

impl Edit {
    /// Applies the edit; `fields` are the offsets of the file's 16-bit fields (counts,
    /// move codes) and `record` the size of a whole record to copy (hcpe), if any.
    fn apply(&self, bytes: &mut Vec<u8>, fields: &[usize], record: Option<usize>) {
        let len = bytes.len();
        let at = self.at as usize % (len + 1);
        match self.op {
            0 if at < len => bytes[at] ^= 1 << (self.value % 8),
            1 if at < len => bytes[at] = self.value as u8,
            2 => bytes.insert(at, self.value as u8),
            3 if at < len => {
                bytes.drain(at..(at + 1 + self.value as usize % 4).min(len));
            }
            4 => bytes.truncate(at),
            // A 16-bit field set to an edge value, or one off its value.
            5 | 6 if !fields.is_empty() => {
                let f = fields[self.at as usize % fields.len()];
                if f + 2 <= len {
                    let old = u16::from_le_bytes([bytes[f], bytes[f + 1]]);
                    let new = match self.op {
                        5 => EDGE_U16[self.value as usize % EDGE_U16.len()],
                        _ if self.value.is_multiple_of(2) => old.wrapping_add(1),
                        _ => old.wrapping_sub(1),
                    };
                    bytes[f..f + 2].copy_from_slice(&new.to_le_bytes());
                }
            }
            // A whole record copied elsewhere, or two swapped (hcpe).
            7 | 8 => {
                let Some(size) = record.filter(|&s| len >= s) else { return };
                let count = len / size;
                let (a, b) = ((self.at as usize % count) * size, (self.value as usize % count) * size);
                let piece: Vec<u8> = bytes[a..a + size].to_vec();
                if self.op == 7 {
                    bytes.splice(b..b, piece);
                } else {
                    let other: Vec<u8> = bytes[b..b + size].to_vec();
                    bytes[a..a + size].copy_from_slice(&other);
                    bytes[b..b + size].copy_from_slice(&piece);
                }
            }
            _ => {}
        }
    }
}

fn mutate(seed: &[u8], edits: &[Edit], fields: &[usize], record: Option<usize>) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for e in edits {
        e.apply(&mut bytes, fields, record);
    }
    bytes
}

/// The offsets of an hcpe file's move codes and game results.
fn hcpe_fields(bytes: &[u8]) -> Vec<usize> {
    (0..bytes.len() / hcpe::ENTRY_BYTES)
        .flat_map(|i| [i * hcpe::ENTRY_BYTES + 34, i * hcpe::ENTRY_BYTES + 36])
        .collect()
}

/// The offsets of an hcpe3 file's 16-bit fields, as far as its layout can be followed:
/// move counts, move codes, candidate counts and candidates' moves and visits.
fn hcpe3_fields(bytes: &[u8]) -> Vec<usize> {
    let mut fields = Vec::new();
    let mut at = 0;
    while at + 36 <= bytes.len() {
        fields.extend([at + 32, at + 34]);
        let moves = u16::from_le_bytes([bytes[at + 32], bytes[at + 33]]) as usize;
        at += 36;
        for _ in 0..moves {
            if at + 6 > bytes.len() {
                return fields;
            }
            fields.extend([at, at + 2, at + 4]);
            let candidates = u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]) as usize;
            at += 6;
            for c in 0..candidates.min(bytes.len().saturating_sub(at) / 4) {
                fields.extend([at + c * 4, at + c * 4 + 2]);
            }
            at += candidates * 4;
        }
    }
    fields
}

/// The start position key (board, side, hands) and moves of a record.
fn game_key(r: &Record) -> (String, Vec<String>) {
    let sfen = r.start.sfen();
    (sfen.split_whitespace().take(3).collect::<Vec<_>>().join(" "), r.usi_moves())
}

fn end_key(r: &Record) -> Option<(EndReason, Option<Color>)> {
    r.end.as_ref().map(|e| (e.reason, e.winner))
}

/// A game read back from hcpe or hcpe3: it gives back its entries, and CSA and KIF
/// written from it read back to the same game.
fn check_game(record: &Record, positions: &[(Position, Move, GameResult)]) -> Result<(), TestCaseError> {
    let entries = entries_of_record(record).map_err(|e| TestCaseError::fail(format!("game does not replay: {e}")))?;
    let back: Vec<_> = entries.into_iter().map(|e| (e.position, e.best_move, e.result)).collect();
    prop_assert!(back == positions, "the game's entries differ from those read");
    for format in [Format::Csa, Format::Kif] {
        let text = match format {
            Format::Csa => write_csa_with(record, CsaVersion::V30),
            f => write_record(f, record),
        };
        let text = text.map_err(|e| TestCaseError::fail(format!("writing {}: {e}", format.name())))?;
        let read = read_games(format, text.as_bytes(), None)
            .map_err(|e| TestCaseError::fail(format!("{} written does not read: {e}\n{text}", format.name())))?;
        prop_assert_eq!(read.len(), 1, "{} games in\n{}", read.len(), text);
        prop_assert_eq!(game_key(&read[0]), game_key(record), "{} written reads as another game", format.name());
        prop_assert_eq!(
            end_key(&read[0]),
            end_key(record),
            "{} written reads with another end:\n{}",
            format.name(),
            text
        );
    }
    Ok(())
}

fn check_hcpe(bytes: &[u8]) -> Result<bool, TestCaseError> {
    // The streaming reader goes past bad records and ends.
    let items = hcpe::Reader::new(bytes).take(bytes.len() / hcpe::ENTRY_BYTES + 2).count();
    prop_assert!(items <= bytes.len() / hcpe::ENTRY_BYTES + 1);
    let Ok(entries) = hcpe::from_bytes(bytes) else { return Ok(false) };
    let again =
        hcpe::to_bytes(&entries).map_err(|e| TestCaseError::fail(format!("accepted entries do not write: {e}")))?;
    prop_assert!(hcpe::from_bytes(&again).unwrap() == entries, "entries written read back as others");
    let records = records_of_entries(&entries);
    prop_assert_eq!(records.iter().map(|r| r.moves.len()).sum::<usize>(), entries.len());
    let mut rest: &[Entry] = &entries;
    for record in &records {
        let (mine, others) = rest.split_at(record.moves.len());
        let expected: Vec<_> = mine.iter().map(|e| (e.position.clone(), e.best_move, e.result)).collect();
        check_game(record, &expected)?;
        rest = others;
    }
    Ok(true)
}

fn check_hcpe3(bytes: &[u8]) -> Result<bool, TestCaseError> {
    let items = hcpe3::Reader::new(bytes).take(bytes.len() / 36 + 2).count();
    prop_assert!(items <= bytes.len() / 36 + 1);
    let Ok(games) = hcpe3::from_bytes(bytes) else { return Ok(false) };
    let again =
        hcpe3::to_bytes(&games).map_err(|e| TestCaseError::fail(format!("accepted games do not write: {e}")))?;
    prop_assert!(hcpe3::from_bytes(&again).unwrap() == games, "games written read back as others");
    for game in &games {
        let record = record_of_game(game);
        let expected: Vec<_> = entries_of(game).into_iter().map(|e| (e.position, e.best_move, game.result)).collect();
        check_game(&record, &expected)?;
        if let Some(end) = &record.end {
            prop_assert_eq!(end.winner, game.result.winner(), "the end names another winner");
        }
    }
    Ok(true)
}

#[test]
fn hcpe_files() {
    let strategy = (0..seeds(false).len(), edits(4));
    fuzz("hcpe files mutated", cases(3_000), strategy, |(i, edits)| {
        let seed = &seeds(false)[i];
        check_hcpe(&mutate(seed, &edits, &hcpe_fields(seed), Some(hcpe::ENTRY_BYTES)))
    });
}

#[test]
fn hcpe3_files() {
    let strategy = (0..seeds(true).len(), edits(4));
    fuzz("hcpe3 files mutated", cases(3_000), strategy, |(i, edits)| {
        let seed = &seeds(true)[i];
        check_hcpe3(&mutate(seed, &edits, &hcpe3_fields(seed), None))
    });
}

#[test]
fn random_bytes() {
    let strategy = prop::collection::vec(any::<u8>(), 0..400);
    fuzz("hcpe and hcpe3 random bytes", cases(3_000), strategy, |bytes| Ok(check_hcpe(&bytes)? | check_hcpe3(&bytes)?));
}

/// Games whose end the board shows or hcpe3 flags come back with that end; a win the
/// board does not show comes back as the loser's resignation (a foul where the winner
/// is to move), a draw as no end.
#[test]
fn ends_read_back() {
    let pos = Position::startpos(Variant::Shogi);
    let at = |result: GameResult, ending| hcpe::end_of(result, ending, &pos).map(|e| (e.reason, e.winner));
    assert_eq!(at(GameResult::GoteWin, Ending::Unmarked), Some((EndReason::Resign, Some(Color::Gote))));
    assert_eq!(at(GameResult::SenteWin, Ending::Unmarked), Some((EndReason::IllegalMove, Some(Color::Sente))));
    assert_eq!(at(GameResult::Draw, Ending::Unmarked), None);
    assert_eq!(at(GameResult::Draw, Ending::MaxMoves), Some((EndReason::MaxMoves, None)));
    let end = GameEnd::at(EndReason::Resign, &pos);
    assert_eq!(end.winner, Some(Color::Gote));
}
