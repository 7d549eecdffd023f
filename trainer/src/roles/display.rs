//! The learner's live status line, through the `progress` crate: a spinner rewritten in
//! place on a terminal, a plain line every 30 s otherwise, nothing with `--quiet`
//! (warnings still show).

use std::io::IsTerminal;
use std::time::Duration;

use progress::Reporter;

/// How often the status line is written when stderr is not a terminal.
const PLAIN_EVERY: Duration = Duration::from_secs(30);

pub struct Display {
    status: Reporter,
    enabled: bool,
    tty: bool,
}

impl Display {
    pub fn new(enabled: bool) -> Display {
        let tty = std::io::stderr().is_terminal();
        let status = match (enabled, tty) {
            (false, _) => Reporter::hidden(),
            (true, true) => Reporter::spinner("learner", "steps"),
            (true, false) => Reporter::plain("learner", None, "steps", PLAIN_EVERY, Box::new(std::io::stderr())),
        };
        Display { status, enabled, tty }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn is_terminal(&self) -> bool {
        self.tty
    }

    /// The status at optimiser step `step` (shown at the display's own pace).
    pub fn show(&self, step: u64, status: &str) {
        self.status.set_message(status);
        self.status.set_position(step);
    }

    /// A message line (kept).
    pub fn println(&self, line: &str) {
        self.status.println(line);
    }

    /// A warning: printed even when the progress display is off (`--quiet`).
    pub fn warn(&self, line: &str) {
        self.status.notice(line);
    }

    /// Ends the status line (the summary follows).
    pub fn finish(&self) {
        self.status.finish();
    }
}
