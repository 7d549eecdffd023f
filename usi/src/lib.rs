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

pub mod book;
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
pub struct ProtocolOutput(Arc<Mutex<Box<dyn Write + Send>>>);

impl ProtocolOutput {
    pub fn new(w: Box<dyn Write + Send>) -> ProtocolOutput {
        ProtocolOutput(Arc::new(Mutex::new(w)))
    }

    pub fn stdout() -> ProtocolOutput {
        ProtocolOutput::new(Box::new(std::io::stdout()))
    }

    /// Writes `s` as one line: a line break inside it (a multi-line error from libtorch,
    /// say) becomes a space, so that a GUI never reads the rest as a line of its own.
    pub fn line(&self, s: &str) {
        let one_line: std::borrow::Cow<str> =
            if s.contains(['\n', '\r']) { s.replace(['\n', '\r'], " ").into() } else { s.into() };
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(w, "{one_line}");
        let _ = w.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_line_with_line_breaks_is_written_as_one_line() {
        let buf = Shared::default();
        let out = ProtocolOutput::new(Box::new(buf.clone()));
        out.line("info string error: cannot load\nException raised from x\r\nframe #0");
        out.line("readyok");
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "info string error: cannot load Exception raised from x  frame #0\nreadyok\n");
    }
}
