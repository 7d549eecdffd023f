//! Opening books in YaneuraOu's text format (`#YANEURAOU-DB2016 1.00`), the format
//! ShogiHome edits and most published shogi books come in:
//!
//! ```text
//! #YANEURAOU-DB2016 1.00
//! sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1
//! 7g7f 3c3d 32 0 12
//! 2g2f none 25 0 3
//! ```
//!
//! A `sfen` line names a position (its move number is kept but not matched: a book move
//! is good whatever ply the position comes at); each line after it is one move of that
//! position: the move (USI), the expected reply (`none` when there is none), the score in
//! centipawns from the side to move's view, the search depth behind the score and how
//! many times the move was played. Other lines starting with `#` are comments. Positions
//! are written in byte order of their SFEN, as YaneuraOu writes them, so that a reader can
//! binary-search the file.
//!
//! [`Book::read`] indexes a whole file in memory (about a second for a million
//! positions); [`choose`] picks a move by the engine's rule.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rules::records::Record;
use rules::{Color, Move};

use rules::score::{centipawns, PONANZA_SCALE};

/// The first line of a book file.
pub const BOOK_HEADER: &str = "#YANEURAOU-DB2016 1.00";

/// One move of a book position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookMove {
    /// The move, in USI.
    pub mv: String,
    /// The expected reply, in USI.
    pub ponder: Option<String>,
    /// Centipawns, the side to move's view.
    pub score: i32,
    /// Depth of the search behind `score` (0: not searched).
    pub depth: i32,
    /// Times played.
    pub count: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("{}: {cause}", .path.display())]
    Io { path: PathBuf, cause: std::io::Error },
    #[error("{}: line {line}: {reason} (`{text}`)", .path.display())]
    Line { path: PathBuf, line: usize, text: String, reason: String },
}

/// A book: the moves of each position, by the position's SFEN without its move number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Book {
    positions: BTreeMap<String, Entry>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Entry {
    /// The move number written on the `sfen` line (kept, not matched).
    ply: u32,
    moves: Vec<BookMove>,
}

/// `sfen` without its move number: board, side to move and hands.
pub fn position_key(sfen: &str) -> String {
    let fields: Vec<&str> = sfen.split_whitespace().collect();
    fields[..fields.len().min(3)].join(" ")
}

impl Book {
    pub fn new() -> Book {
        Book::default()
    }

    /// Reads and indexes the book at `path`; a malformed line is an error naming it.
    pub fn read(path: &Path) -> Result<Book, BookError> {
        let text = std::fs::read(path).map_err(|cause| BookError::Io { path: path.into(), cause })?;
        let text = String::from_utf8_lossy(&text);
        Book::parse(&text, path)
    }

    /// The book in `text` (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Book, BookError> {
        let mut book = Book::new();
        let mut current: Option<String> = None;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let bad = |reason: &str| BookError::Line {
                path: path.into(),
                line: index + 1,
                text: rules::excerpt(line).to_string(),
                reason: reason.into(),
            };
            if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
                continue;
            }
            if let Some(sfen) = line.strip_prefix("sfen ") {
                let fields: Vec<&str> = sfen.split_whitespace().collect();
                if fields.len() < 3 {
                    return Err(bad("a sfen line needs the board, the side to move and the hands"));
                }
                let ply = match fields.get(3) {
                    None => 1,
                    Some(p) => p.parse().map_err(|_| bad("the move number is not a number"))?,
                };
                let key = position_key(sfen);
                book.positions.entry(key.clone()).or_default().ply = ply;
                current = Some(key);
                continue;
            }
            let key = current.as_ref().ok_or_else(|| bad("a move before any sfen line"))?;
            let mv = parse_move_line(line).map_err(|reason| bad(&reason))?;
            book.positions.get_mut(key).expect("entered above").moves.push(mv);
        }
        Ok(book)
    }

    /// The moves of the position `sfen` (its move number ignored), if the book has it.
    pub fn moves(&self, sfen: &str) -> Option<&[BookMove]> {
        self.positions.get(&position_key(sfen)).map(|e| e.moves.as_slice()).filter(|m| !m.is_empty())
    }

    /// Positions in the book.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Adds `mv` to position `sfen`: a move already there gets the counts added (and the
    /// new score, depth and reply when deeper or as deep).
    pub fn add(&mut self, sfen: &str, mv: BookMove) {
        let ply = sfen.split_whitespace().nth(3).and_then(|p| p.parse().ok()).unwrap_or(1);
        let entry = self.positions.entry(position_key(sfen)).or_insert_with(|| Entry { ply, moves: Vec::new() });
        match entry.moves.iter_mut().find(|m| m.mv == mv.mv) {
            Some(old) => {
                old.count += mv.count;
                if mv.depth >= old.depth {
                    (old.score, old.depth) = (mv.score, mv.depth);
                    old.ponder = mv.ponder.or(old.ponder.take());
                }
            }
            None => entry.moves.push(mv),
        }
    }

    /// Every position's SFEN (with its move number) and moves, in the file's order.
    pub fn iter(&self) -> impl Iterator<Item = (String, &[BookMove])> {
        self.positions.iter().map(|(key, e)| (format!("{key} {}", e.ply), e.moves.as_slice()))
    }

    /// Mutable moves of every position (to score them).
    pub fn moves_mut(&mut self) -> impl Iterator<Item = (String, &mut Vec<BookMove>)> {
        self.positions.iter_mut().map(|(key, e)| (format!("{key} {}", e.ply), &mut e.moves))
    }

    /// The book as text: the header, then the positions in byte order of their SFEN, each
    /// position's moves by count, then score.
    pub fn to_text(&self) -> String {
        let mut out = format!("{BOOK_HEADER}\n");
        for (sfen, moves) in self.iter() {
            if moves.is_empty() {
                continue;
            }
            out.push_str(&format!("sfen {sfen}\n"));
            let mut sorted: Vec<&BookMove> = moves.iter().collect();
            sorted.sort_by(|a, b| b.count.cmp(&a.count).then(b.score.cmp(&a.score)).then(a.mv.cmp(&b.mv)));
            for m in sorted {
                let ponder = m.ponder.as_deref().unwrap_or("none");
                out.push_str(&format!("{} {ponder} {} {} {}\n", m.mv, m.score, m.depth, m.count));
            }
        }
        out
    }

    /// Writes the book to `path` atomically.
    pub fn write(&self, path: &Path) -> Result<(), BookError> {
        files::write_atomic(path, self.to_text().as_bytes()).map_err(|cause| BookError::Io { path: path.into(), cause })
    }
}

/// `move ponder score depth count`; the last three may be missing (0, 0, 1).
fn parse_move_line(line: &str) -> Result<BookMove, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let number = |i: usize, what: &str, default: i64| -> Result<i64, String> {
        match fields.get(i) {
            None => Ok(default),
            Some(f) => f.parse().map_err(|_| format!("the {what} `{}` is not a number", rules::excerpt(f))),
        }
    };
    let mv = fields[0].to_string();
    let ponder = fields.get(1).filter(|p| **p != "none" && **p != "None").map(|p| p.to_string());
    let score = number(2, "score", 0)?;
    let depth = number(3, "depth", 0)?;
    let count = number(4, "count", 1)?;
    if count < 0 {
        return Err(format!("the count {count} is negative"));
    }
    let clamp = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    Ok(BookMove { mv, ponder, score: clamp(score), depth: clamp(depth), count: count as u64 })
}

/// Counts the moves of games into book moves: each position and move of the first
/// `max_ply` plies, the reply played most after it, and the mover's result in the games
/// that played it as the score (centipawns on Ponanza's scale, [`rules::score`]).
pub struct BookBuilder {
    max_ply: usize,
    tallies: HashMap<(String, String), Tally>,
}

#[derive(Default)]
struct Tally {
    count: u64,
    /// The mover's points (1 a win, 1/2 a draw) over the games with a result.
    points: f64,
    decided: u64,
    replies: HashMap<String, u64>,
}

impl BookBuilder {
    pub fn new(max_ply: usize) -> BookBuilder {
        BookBuilder { max_ply, tallies: HashMap::new() }
    }

    /// Counts the first plies of `record` (standard shogi).
    pub fn add_game(&mut self, record: &Record) -> Result<(), String> {
        let mut pos = record.start.position().map_err(|e| format!("start position: {e}"))?;
        let moves: Vec<Move> = record.moves.iter().map(|m| m.mv).collect();
        for (ply, mv) in moves.iter().enumerate().take(self.max_ply) {
            let tally = self.tallies.entry((pos.to_sfen(), mv.to_usi())).or_default();
            tally.count += 1;
            if let Some(p) = points_for(record, pos.side_to_move()) {
                tally.points += p;
                tally.decided += 1;
            }
            if let Some(reply) = moves.get(ply + 1) {
                *tally.replies.entry(reply.to_usi()).or_default() += 1;
            }
            pos.play(*mv);
        }
        Ok(())
    }

    /// The moves played at least `min_count` times, by SFEN (with its move number) and
    /// move.
    pub fn moves(self, min_count: u64) -> Vec<(String, BookMove)> {
        let mut kept: Vec<(String, BookMove)> = self
            .tallies
            .into_iter()
            .filter(|(_, t)| t.count >= min_count)
            .map(|((sfen, mv), t)| (sfen, t.book_move(mv)))
            .collect();
        kept.sort_by(|a, b| (&a.0, &a.1.mv).cmp(&(&b.0, &b.1.mv)));
        kept
    }

    /// The book of the moves played at least `min_count` times.
    pub fn build(self, min_count: u64) -> Book {
        let mut book = Book::new();
        for (sfen, mv) in self.moves(min_count) {
            book.add(&sfen, mv);
        }
        book
    }
}

impl Tally {
    fn book_move(&self, mv: String) -> BookMove {
        let reply = self.replies.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(r, _)| r.clone());
        // Laplace's rule keeps one game's result off the scale's ends.
        let p = (self.points + 0.5) / (self.decided as f64 + 1.0);
        let score = if self.decided == 0 { 0 } else { centipawns(p, PONANZA_SCALE).round() as i32 };
        BookMove { mv, ponder: reply, score, depth: 0, count: self.count }
    }
}

/// The mover's points in `record`, `None` when the record has no result.
fn points_for(record: &Record, mover: Color) -> Option<f64> {
    use rules::records::EndReason::*;
    let end = record.end.as_ref()?;
    match (end.winner, end.reason) {
        (Some(w), _) => Some(if w == mover { 1.0 } else { 0.0 }),
        (None, Repetition | Impasse | MaxMoves | Draw) => Some(0.5),
        (None, _) => None,
    }
}

/// How the engine picks among a position's book moves (YaneuraOu's options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookRule {
    /// Moves whose score is more than this below the best score are left out
    /// (`BookEvalDiff`; 0: the best-scored moves only).
    pub eval_diff: i32,
    /// Moves scored below this for the side to move are left out (`BookEvalBlackLimit`
    /// when sente moves, `BookEvalWhiteLimit` when gote moves).
    pub eval_floor: i32,
    /// Moves searched shallower than this are left out (`BookDepthLimit`; 0: none).
    pub depth_limit: i32,
    /// Weighted by the times played (`ConsiderBookMoveCount`); else equally likely.
    pub by_count: bool,
}

impl Default for BookRule {
    /// YaneuraOu's defaults: within 30 centipawns of the best, a floor of 0, no depth
    /// limit, equally likely.
    fn default() -> BookRule {
        BookRule { eval_diff: 30, eval_floor: 0, depth_limit: 0, by_count: false }
    }
}

/// The moves of `moves` the rule allows, then one of them drawn with `random` (uniform in
/// [0, 1)); `None` when the rule leaves none. `legal` says whether a move can be played
/// (a book may hold moves of another rule set, or damaged ones).
pub fn choose<'a>(
    moves: &'a [BookMove],
    rule: &BookRule,
    legal: impl Fn(&str) -> bool,
    random: f64,
) -> Option<&'a BookMove> {
    let candidates: Vec<&BookMove> =
        moves.iter().filter(|m| m.depth >= rule.depth_limit && m.score >= rule.eval_floor && legal(&m.mv)).collect();
    let best = candidates.iter().map(|m| m.score).max()?;
    let candidates: Vec<&BookMove> =
        candidates.into_iter().filter(|m| m.score >= best.saturating_sub(rule.eval_diff.max(0))).collect();
    let weight = |m: &BookMove| if rule.by_count { m.count.max(1) as f64 } else { 1.0 };
    let total: f64 = candidates.iter().map(|m| weight(m)).sum();
    let mut pick = random.clamp(0.0, 1.0) * total;
    for m in &candidates {
        pick -= weight(m);
        if pick < 0.0 {
            return Some(m);
        }
    }
    candidates.last().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

    fn mv(m: &str, score: i32, count: u64) -> BookMove {
        BookMove { mv: m.into(), ponder: None, score, depth: 0, count }
    }

    #[test]
    fn a_book_round_trips_through_its_text_and_ignores_the_move_number() {
        let mut book = Book::new();
        book.add(START, BookMove { ponder: Some("3c3d".into()), ..mv("7g7f", 40, 3) });
        book.add(START, mv("2g2f", 35, 1));
        book.add(START, mv("7g7f", 40, 2));
        let text = book.to_text();
        assert!(text.starts_with(BOOK_HEADER));
        assert!(text.contains(&format!("sfen {START}\n7g7f 3c3d 40 0 5\n2g2f none 35 0 1\n")), "{text}");
        let back = Book::parse(&text, Path::new("b.db")).unwrap();
        assert_eq!(back, book);
        let later = START.replace(" 1", " 37");
        assert_eq!(back.moves(&later).unwrap().len(), 2);
    }

    #[test]
    fn broken_lines_are_named() {
        for (text, want) in [
            ("7g7f none 0 0 1\n", "line 1: a move before any sfen line"),
            (&*format!("sfen {START}\n7g7f none x 0 1\n"), "line 2: the score `x` is not a number"),
            ("sfen lnsgkgsnl\n", "line 1: a sfen line needs"),
            (&*format!("sfen {START}\n7g7f none 0 0 -3\n"), "line 2: the count -3 is negative"),
        ] {
            let err = Book::parse(text, Path::new("b.db")).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn the_rule_keeps_moves_near_the_best_above_the_floor_and_legal() {
        let moves = [mv("7g7f", 50, 1), mv("2g2f", 30, 9), mv("5g5f", 10, 100), mv("1g1f", -20, 1)];
        let rule = BookRule { eval_diff: 25, ..BookRule::default() };
        let picks: Vec<&str> =
            (0..10).map(|i| choose(&moves, &rule, |_| true, i as f64 / 10.0).unwrap().mv.as_str()).collect();
        assert!(picks.contains(&"7g7f") && picks.contains(&"2g2f") && !picks.contains(&"5g5f"), "{picks:?}");
        let best = BookRule { eval_diff: 0, ..rule };
        assert_eq!(choose(&moves, &best, |m| m != "7g7f", 0.9).unwrap().mv, "2g2f");
        let by_count = BookRule { eval_diff: 100, eval_floor: 0, by_count: true, ..rule };
        // Weights 1, 9, 100 (1g1f is below the floor): 0.5 of 110 falls in 5g5f's share.
        assert_eq!(choose(&moves, &by_count, |_| true, 0.5).unwrap().mv, "5g5f");
        let floor = BookRule { eval_floor: 60, ..rule };
        assert_eq!(choose(&moves, &floor, |_| true, 0.5), None);
    }
}
