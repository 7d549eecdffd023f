//! koma's engine: a USI player for shogi, sho shogi and dai shogi, and an XBoard
//! (protocol 2) player for sho and dai shogi as HaChu and XBoard speak them.
//!
//! The search is the `search` crate's player search (`search::driver`: threads on one
//! tree with virtual loss, tree reuse, the root mate-in-3 scan, the stopping rules), the
//! same that the arena's koma player and the trainer's evaluation games play with.
//!
//! - [`engine`]: options, network loading, the tree kept between moves and the search
//!   thread (shared by the protocols).
//! - [`usi`], [`xboard`]: the protocol loops.
//! - [`options`]: the option table.
//! - [`input`]: command lines read as bytes (a bad line costs only itself).
//! - [`go`]: the USI `go` command's words checked into search limits.

pub mod engine;
pub mod go;
pub mod input;
pub mod options;
pub mod usi;
pub mod xboard;

use std::io::Write;

/// Characters of a command line that an answer quotes before cutting it short (an
/// `Error (...)` of XBoard, a bad USI `position`): a SFEN and a few moves fit; a
/// megabyte line does not come back whole. Single tokens are cut to
/// [`rules::EXCERPT_CHARS`].
pub const ECHO_CHARS: usize = 200;
use std::sync::{Arc, Mutex};

/// A line-oriented output shared by the protocol thread and the search thread; every
/// line is flushed at once.
#[derive(Clone)]
pub struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    pub fn new(w: Box<dyn Write + Send>) -> Out {
        Out(Arc::new(Mutex::new(w)))
    }

    pub fn stdout() -> Out {
        Out::new(Box::new(std::io::stdout()))
    }

    pub fn line(&self, s: &str) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(w, "{s}");
        let _ = w.flush();
    }
}
