//! The live progress line on stderr: rewritten in place on a terminal, one line every
//! 30 s otherwise.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Display {
    tty: bool,
    enabled: bool,
    last: Instant,
    every: Duration,
}

impl Display {
    pub fn new(enabled: bool) -> Display {
        let tty = std::io::stderr().is_terminal();
        Display {
            tty,
            enabled,
            last: Instant::now() - Duration::from_secs(3600),
            every: if tty { Duration::from_millis(500) } else { Duration::from_secs(30) },
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn is_terminal(&self) -> bool {
        self.tty
    }

    /// Shows a status line (at most every `every` unless `force`).
    pub fn show(&mut self, line: &str, force: bool) {
        if !self.enabled || (!force && self.last.elapsed() < self.every) {
            return;
        }
        self.last = Instant::now();
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(e, "{line}");
        }
        let _ = e.flush();
    }

    /// A message line (kept).
    pub fn println(&mut self, line: &str) {
        if !self.enabled {
            return;
        }
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K");
        }
        let _ = writeln!(e, "{line}");
    }

    /// A warning: printed even when the progress display is off (`--quiet`).
    pub fn warn(&mut self, line: &str) {
        let mut e = std::io::stderr().lock();
        if self.tty && self.enabled {
            let _ = write!(e, "\r\x1b[2K");
        }
        let _ = writeln!(e, "{line}");
    }
}
