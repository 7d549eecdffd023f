//! The engine's opening book: YaneuraOu's text book ([`dataio::book`]) at `BookFile`,
//! used while `USI_OwnBook` is on and the game is within `BookMoves` plies, with
//! YaneuraOu's choice options (`BookEvalDiff`, `BookEvalBlackLimit`,
//! `BookEvalWhiteLimit`, `BookDepthLimit`, `ConsiderBookMoveCount`). A book move is
//! played at once: no search, an `info string` naming the book and a `pv` line.

use std::path::{Path, PathBuf};
use std::time::Instant;

use dataio::book::{choose, Book, BookError, BookMove, BookRule};
use rules::{Color, Move, Position};

/// The book options, as the engine holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookOptions {
    /// `USI_OwnBook`: ShogiGUI's "use the engine's book".
    pub own_book: bool,
    /// `BookFile`: the book's path (empty: none).
    pub file: String,
    /// `BookMoves`: the book answers in positions up to this move number (SFEN).
    pub moves: u32,
    /// `BookEvalDiff`, in centipawns below the best move's score.
    pub eval_diff: i32,
    /// `BookEvalBlackLimit`, `BookEvalWhiteLimit`: the lowest score a move may have for
    /// sente, for gote.
    pub black_limit: i32,
    pub white_limit: i32,
    /// `BookDepthLimit`: the shallowest search behind a move's score (0: any).
    pub depth_limit: i32,
    /// `ConsiderBookMoveCount`: weighted by times played, else equally likely.
    pub by_count: bool,
}

impl Default for BookOptions {
    fn default() -> BookOptions {
        BookOptions {
            own_book: true,
            file: String::new(),
            moves: 16,
            eval_diff: 30,
            black_limit: 0,
            white_limit: -140,
            depth_limit: 0,
            by_count: false,
        }
    }
}

impl BookOptions {
    fn rule(&self, side: Color) -> BookRule {
        BookRule {
            eval_diff: self.eval_diff,
            eval_floor: if side == Color::Sente { self.black_limit } else { self.white_limit },
            depth_limit: self.depth_limit,
            by_count: self.by_count,
        }
    }
}

/// A book loaded from its file.
pub struct EngineBook {
    pub path: PathBuf,
    pub book: Book,
}

/// A book move chosen for a position.
pub struct BookPick {
    pub mv: Move,
    pub ponder: Option<Move>,
    pub entry: BookMove,
    /// Moves the position has in the book.
    pub choices: usize,
}

impl EngineBook {
    /// Reads the book at `path` and says what it holds and how long it took.
    pub fn load(path: &Path) -> Result<(EngineBook, String), BookError> {
        let start = Instant::now();
        let book = Book::read(path)?;
        let note =
            format!("book: {} ({} positions, read in {} ms)", path.display(), book.len(), start.elapsed().as_millis());
        Ok((EngineBook { path: path.into(), book }, note))
    }

    /// The move the book gives in `pos` under `opts` (`random` in [0, 1) draws among the
    /// allowed ones), if the game is still in the book's plies and the position is there.
    pub fn pick(&self, pos: &Position, opts: &BookOptions, random: f64) -> Option<BookPick> {
        if !opts.own_book || pos.move_number() > opts.moves {
            return None;
        }
        let moves = self.book.moves(&pos.to_sfen())?;
        let legal = |usi: &str| pos.parse_usi(usi).is_ok();
        let chosen = choose(moves, &opts.rule(pos.side_to_move()), legal, random)?;
        let mv = pos.parse_usi(&chosen.mv).ok()?;
        let mut after = pos.clone();
        after.play(mv);
        let ponder = chosen.ponder.as_deref().and_then(|p| after.parse_usi(p).ok());
        Some(BookPick { mv, ponder, entry: chosen.clone(), choices: moves.len() })
    }
}

impl BookPick {
    /// The lines a book move is announced with, then its `bestmove`.
    pub fn lines(&self, book: &Path) -> Vec<String> {
        let e = &self.entry;
        let pv = match self.ponder {
            Some(p) => format!("{} {}", self.mv.to_usi(), p.to_usi()),
            None => self.mv.to_usi(),
        };
        let bestmove = match self.ponder {
            Some(p) => format!("bestmove {} ponder {}", self.mv.to_usi(), p.to_usi()),
            None => format!("bestmove {}", self.mv.to_usi()),
        };
        vec![
            format!(
                "info string book move {} (score {}, depth {}, played {} times; {} moves here) from {}",
                self.mv.to_usi(),
                e.score,
                e.depth,
                e.count,
                self.choices,
                book.display()
            ),
            format!("info depth {} score cp {} nodes 0 pv {pv}", e.depth.max(1), e.score),
            bestmove,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;

    fn book_with(moves: &[(&str, &str, i32)]) -> EngineBook {
        let mut book = Book::new();
        let start = Position::startpos(Variant::Shogi).to_sfen();
        for (mv, ponder, score) in moves {
            let ponder = (!ponder.is_empty()).then(|| ponder.to_string());
            book.add(&start, BookMove { mv: mv.to_string(), ponder, score: *score, depth: 10, count: 1 });
        }
        EngineBook { path: "b.db".into(), book }
    }

    #[test]
    fn the_book_answers_within_its_plies_with_legal_moves_only() {
        let book = book_with(&[("7g7f", "3c3d", 50), ("7g7e", "", 80), ("2g2f", "8c8d", 40)]);
        let pos = Position::startpos(Variant::Shogi);
        let opts = BookOptions { eval_diff: 0, ..BookOptions::default() };
        // 7g7e is no legal move: the best legal one is 7g7f, with its reply.
        let pick = book.pick(&pos, &opts, 0.5).unwrap();
        assert_eq!((pick.mv.to_usi(), pick.ponder.map(|p| p.to_usi())), ("7g7f".into(), Some("3c3d".into())));
        let lines = pick.lines(Path::new("b.db"));
        assert!(lines[0].starts_with("info string book move 7g7f") && lines[0].ends_with("from b.db"), "{lines:?}");
        assert_eq!(lines[1], "info depth 10 score cp 50 nodes 0 pv 7g7f 3c3d");
        assert_eq!(lines[2], "bestmove 7g7f ponder 3c3d");
        assert!(book.pick(&pos, &BookOptions { own_book: false, ..opts.clone() }, 0.5).is_none());
        assert!(book.pick(&pos, &BookOptions { moves: 0, ..opts.clone() }, 0.5).is_none());
        assert!(book.pick(&pos, &BookOptions { black_limit: 60, ..opts.clone() }, 0.5).is_none());
        let mut later = pos.clone();
        later.play_usi("7g7f").unwrap();
        assert!(book.pick(&later, &opts, 0.5).is_none(), "a position the book lacks");
    }
}
