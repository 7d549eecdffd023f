//! Progress of koma's long phases (evaluation games, reading records, training steps,
//! self-play, arena matches) on stderr, through one small type, [`Reporter`]:
//!
//! - on a terminal, an `indicatif` bar with the rate and the time left when the length
//!   is known ([`Reporter::bar`]), else a spinner with the count and the rate
//!   ([`Reporter::spinner`]);
//! - when stderr is a file or a pipe (logs, CI), a plain line every ten seconds and one
//!   at the end, so logs stay readable;
//! - nothing at all for `--quiet` ([`Reporter::hidden`]), except the lines that must be
//!   seen all the same ([`Reporter::notice`]).
//!
//! Library code writes its messages through here too: above its reporter's bar
//! ([`Reporter::println`]), or, with no reporter at hand, as a line of their own ([`line`]),
//! or as `log` records, which [`logger::init`] (called once by each binary) writes to
//! stderr the same way. Lines from outside a reporter are drawn above the newest live bar,
//! so that neither garbles the other.
//!
//! A `Reporter` is cheap to clone and can be updated from several threads.

pub mod logger;

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a plain (non-terminal) display writes a line.
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(10);

/// The bars drawn on stderr now, oldest first, by id: [`line`] and the log lines are
/// written above the newest.
static LIVE_BARS: Mutex<Vec<(u64, ProgressBar)>> = Mutex::new(Vec::new());
static NEXT_BAR_ID: AtomicU64 = AtomicU64::new(0);

/// The progress of one phase. Clones share it.
#[derive(Clone)]
pub struct Reporter {
    inner: Arc<Inner>,
}

struct Inner {
    label: String,
    unit: String,
    total: Option<u64>,
    done: AtomicU64,
    message: Mutex<String>,
    started: Instant,
    finished: AtomicBool,
    display: Display,
}

enum Display {
    Hidden,
    /// A bar on the terminal and its id in [`LIVE_BARS`].
    Live(ProgressBar, u64),
    Plain(Mutex<Plain>),
}

struct Plain {
    every: Duration,
    last: Instant,
    out: Box<dyn Write + Send>,
}

impl Reporter {
    /// A phase of `total` steps counted in `unit` (`games`, `steps`, `files`).
    pub fn bar(label: &str, total: u64, unit: &str) -> Reporter {
        Reporter::on_stderr(label, Some(total), unit)
    }

    /// A phase of unknown length.
    pub fn spinner(label: &str, unit: &str) -> Reporter {
        Reporter::on_stderr(label, None, unit)
    }

    /// Shows nothing (`--quiet`); counts all the same.
    pub fn hidden() -> Reporter {
        Reporter::new(String::new(), None, String::new(), Display::Hidden)
    }

    /// `bar` or `spinner` when `show`, else `hidden`.
    pub fn shown_if(show: bool, label: &str, total: Option<u64>, unit: &str) -> Reporter {
        if show {
            Reporter::on_stderr(label, total, unit)
        } else {
            Reporter::hidden()
        }
    }

    /// Plain lines into `out`, one every `every` and one at the end: what a terminal
    /// does not get (and what the tests read).
    pub fn plain(label: &str, total: Option<u64>, unit: &str, every: Duration, out: Box<dyn Write + Send>) -> Reporter {
        let plain = Plain { every, last: Instant::now(), out };
        Reporter::new(label.to_string(), total, unit.to_string(), Display::Plain(Mutex::new(plain)))
    }

    fn on_stderr(label: &str, total: Option<u64>, unit: &str) -> Reporter {
        if !std::io::stderr().is_terminal() {
            return Reporter::plain(label, total, unit, PLAIN_INTERVAL, Box::new(std::io::stderr()));
        }
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()).with_style(bar_style(unit)),
            None => {
                let s =
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(spinner_style(unit));
                s.enable_steady_tick(Duration::from_millis(250));
                s
            }
        };
        bar.set_prefix(label.to_string());
        let id = NEXT_BAR_ID.fetch_add(1, Ordering::Relaxed);
        live_bars().push((id, bar.clone()));
        Reporter::new(label.to_string(), total, unit.to_string(), Display::Live(bar, id))
    }

    fn new(label: String, total: Option<u64>, unit: String, display: Display) -> Reporter {
        let inner = Inner {
            label,
            unit,
            total,
            done: AtomicU64::new(0),
            message: Mutex::new(String::new()),
            started: Instant::now(),
            finished: AtomicBool::new(false),
            display,
        };
        Reporter { inner: Arc::new(inner) }
    }

    /// `n` more steps done.
    pub fn inc(&self, n: u64) {
        let done = self.inner.done.fetch_add(n, Ordering::Relaxed) + n;
        self.update(done);
    }

    /// `done` steps done in all.
    pub fn set_position(&self, done: u64) {
        self.inner.done.store(done, Ordering::Relaxed);
        self.update(done);
    }

    /// Steps done so far.
    pub fn position(&self) -> u64 {
        self.inner.done.load(Ordering::Relaxed)
    }

    /// A short note after the counts (a score, a loss).
    pub fn set_message(&self, message: impl Into<String>) {
        let message = message.into();
        if let Display::Live(bar, _) = &self.inner.display {
            bar.set_message(message.clone());
        }
        *self.inner.message.lock().unwrap_or_else(|e| e.into_inner()) = message;
    }

    /// A line of its own (above a live bar), unless hidden.
    pub fn println(&self, line: &str) {
        match &self.inner.display {
            Display::Hidden => {}
            Display::Live(bar, _) => bar.println(line),
            Display::Plain(plain) => {
                let mut plain = plain.lock().unwrap_or_else(|e| e.into_inner());
                let _ = writeln!(plain.out, "{line}");
            }
        }
    }

    /// A line shown even by a hidden reporter: warnings, and what a user must see with
    /// `--quiet` (which hides progress, not problems).
    pub fn notice(&self, line: &str) {
        match &self.inner.display {
            Display::Hidden => crate::line(line),
            _ => self.println(line),
        }
    }

    /// Ends the phase: a live bar is cleared (the caller prints its summary), a plain
    /// display writes its last line.
    pub fn finish(&self) {
        if self.inner.finished.swap(true, Ordering::Relaxed) {
            return;
        }
        match &self.inner.display {
            Display::Hidden => {}
            Display::Live(bar, id) => clear_live_bar(bar, *id),
            Display::Plain(plain) => {
                let line = self.inner.status_line(self.position());
                let mut plain = plain.lock().unwrap_or_else(|e| e.into_inner());
                let _ = writeln!(plain.out, "{line}");
                let _ = plain.out.flush();
            }
        }
    }

    fn update(&self, done: u64) {
        match &self.inner.display {
            Display::Hidden => {}
            Display::Live(bar, _) => bar.set_position(done),
            Display::Plain(plain) => {
                let mut plain = plain.lock().unwrap_or_else(|e| e.into_inner());
                if plain.last.elapsed() >= plain.every {
                    plain.last = Instant::now();
                    let line = self.inner.status_line(done);
                    let _ = writeln!(plain.out, "{line}");
                    let _ = plain.out.flush();
                }
            }
        }
    }
}

impl Inner {
    /// `label: 40/100 games (3.2/s, 19s left) message`, or without a total
    /// `label: 40 games (3.2/s, 12s) message`.
    fn status_line(&self, done: u64) -> String {
        let elapsed = self.started.elapsed();
        let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
        let mut line = format!("{}: ", self.label);
        match self.total {
            Some(total) => {
                let _ = write!(line, "{done}/{total} {} ({}/s, ", self.unit, rate_text(rate));
                if done >= total {
                    let _ = write!(line, "took {})", duration_text(elapsed));
                } else if done == 0 {
                    let _ = write!(line, "{} so far)", duration_text(elapsed));
                } else {
                    let left = Duration::from_secs_f64((total - done) as f64 / rate);
                    let _ = write!(line, "{} left)", duration_text(left));
                }
            }
            None => {
                let _ = write!(line, "{done} {} ({}/s, {})", self.unit, rate_text(rate), duration_text(elapsed));
            }
        }
        let message = self.message.lock().unwrap_or_else(|e| e.into_inner());
        if !message.is_empty() {
            let _ = write!(line, " {message}");
        }
        line
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Display::Live(bar, id) = &self.display {
            if !self.finished.load(Ordering::Relaxed) {
                clear_live_bar(bar, *id);
            }
        }
    }
}

fn bar_style(unit: &str) -> ProgressStyle {
    let template =
        format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{rate}}, {{eta}} left, {{elapsed}}) {{msg}}");
    let style = ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar());
    style.progress_chars("=> ").with_key("rate", rate_key)
}

fn spinner_style(unit: &str) -> ProgressStyle {
    let template = format!("{{spinner}} {{prefix}}: {{pos}} {unit} ({{rate}}, {{elapsed}}) {{msg}}");
    let style = ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_spinner());
    style.with_key("rate", rate_key)
}

/// `{rate}`: steps per second as the plain lines write it.
fn rate_key(state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write) {
    let _ = write!(out, "{}/s", rate_text(state.per_sec()));
}

fn rate_text(rate: f64) -> String {
    if rate >= 100.0 {
        format!("{rate:.0}")
    } else if rate >= 1.0 {
        format!("{rate:.1}")
    } else {
        format!("{rate:.2}")
    }
}

/// A message line on stderr from code with no [`Reporter`] at hand (a note, a warning).
pub fn line(text: &str) {
    let _ = write_to_stderr(format!("{text}\n").as_bytes());
}

/// Writes `bytes` (whole lines) to stderr, above the newest live bar if there is one.
fn write_to_stderr(bytes: &[u8]) -> std::io::Result<()> {
    let write = || {
        let mut err = std::io::stderr().lock();
        err.write_all(bytes)?;
        err.flush()
    };
    // A clone, so that the list is not locked while the bar is redrawn.
    let newest = live_bars().last().map(|(_, bar)| bar.clone());
    match newest {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

fn live_bars() -> std::sync::MutexGuard<'static, Vec<(u64, ProgressBar)>> {
    LIVE_BARS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes the bar off the screen and out of [`LIVE_BARS`].
fn clear_live_bar(bar: &ProgressBar, id: u64) {
    live_bars().retain(|(live, _)| *live != id);
    bar.finish_and_clear();
}

/// `42s`, `3m05s`, `2h07m`.
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Write` whose bytes the test can read.
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

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn plain_lines_count_rate_and_time_left() {
        let out = Shared::default();
        let p = Reporter::plain("evaluate", Some(4), "games", Duration::ZERO, Box::new(out.clone()));
        p.inc(1);
        p.set_message("+1 =0 -0");
        p.inc(1);
        p.println("a line of its own");
        p.inc(2);
        p.finish();
        p.finish();
        let text = out.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("evaluate: 1/4 games (") && lines[0].contains(" left)"), "{text}");
        assert!(lines[1].starts_with("evaluate: 2/4 games") && lines[1].ends_with(" +1 =0 -0"), "{text}");
        assert_eq!(lines[2], "a line of its own");
        assert!(lines[4].starts_with("evaluate: 4/4 games") && lines[4].contains("took "), "{text}");
    }

    #[test]
    fn plain_lines_wait_for_their_interval() {
        let out = Shared::default();
        let p = Reporter::plain("read", None, "files", Duration::from_secs(3600), Box::new(out.clone()));
        for _ in 0..100 {
            p.inc(1);
        }
        assert_eq!(out.text(), "", "no line before the interval");
        p.finish();
        assert!(out.text().starts_with("read: 100 files ("), "{}", out.text());
        assert_eq!(p.position(), 100);
    }

    #[test]
    fn hidden_counts_but_shows_nothing() {
        let p = Reporter::hidden();
        let q = p.clone();
        q.inc(3);
        p.println("not shown");
        p.finish();
        assert_eq!(p.position(), 3);
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(duration_text(Duration::from_secs(42)), "42s");
        assert_eq!(duration_text(Duration::from_secs(185)), "3m05s");
        assert_eq!(duration_text(Duration::from_secs(7620)), "2h07m");
    }
}
