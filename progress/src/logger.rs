//! The output of the `log` facade, through which koma's libraries write their notes and
//! warnings: each record one plain line on stderr (above a live progress bar), filtered by
//! the environment.
//!
//! The filter is `KOMA_LOG`, else `RUST_LOG`, in `env_logger`'s syntax: a level (`debug`,
//! `warn`, `off`) and/or `target=level` pairs (`usi=debug,arena=warn`; a target is a
//! crate's library name or a module path in it). Targets it does not name stay at the
//! program's default: `warn` for the engine (a GUI's stderr stays clean), `info` for
//! `koma`, whose libraries tell their user what they do.

use std::io::Write;

use log::Level;
pub use log::LevelFilter;

/// The environment variables that set the filter, the first one set (and not empty) wins.
pub const FILTER_VARIABLES: [&str; 2] = ["KOMA_LOG", "RUST_LOG"];

/// Sends the process's `log` records to stderr: those at `default` or above unless the
/// environment says otherwise (see the module). Call it once, early in `main`; later
/// calls change nothing.
pub fn init(default: LevelFilter) {
    let mut builder = env_logger::Builder::new();
    builder.filter_level(default);
    if let Some(spec) = filter_from_env() {
        builder.parse_filters(&spec);
    }
    builder
        .format(|out, record| writeln!(out, "{}", line_text(record)))
        .write_style(env_logger::WriteStyle::Never)
        .target(env_logger::Target::Pipe(Box::new(AboveBars)));
    // Already set (a second call, or a test harness's logger): keep that one.
    let _ = builder.try_init();
}

/// The filter the environment sets, if any.
fn filter_from_env() -> Option<String> {
    FILTER_VARIABLES.iter().filter_map(|name| std::env::var(name).ok()).find(|spec| !spec.trim().is_empty())
}

/// A record as its line: notes, warnings and errors as the message alone (they name their
/// program themselves, `koma worker: ...`); debugging lines with their level and origin.
fn line_text(record: &log::Record) -> String {
    match record.level() {
        Level::Error | Level::Warn | Level::Info => record.args().to_string(),
        Level::Debug | Level::Trace => {
            format!("[{} {}] {}", record.level().as_str().to_lowercase(), record.target(), record.args())
        }
    }
}

/// stderr, above the newest live progress bar.
struct AboveBars;

impl Write for AboveBars {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        crate::write_to_stderr(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(level: Level, target: &str, message: std::fmt::Arguments) -> String {
        line_text(&log::Record::builder().level(level).target(target).args(message).build())
    }

    #[test]
    fn notes_and_warnings_read_as_written() {
        let warning = text(Level::Warn, "trainer::roles::worker", format_args!("koma worker w1: keeping step {}", 4));
        assert_eq!(warning, "koma worker w1: keeping step 4");
        assert_eq!(text(Level::Info, "arena::process", format_args!("[engine] > usi")), "[engine] > usi");
    }

    #[test]
    fn debugging_lines_name_their_level_and_origin() {
        let line = text(Level::Debug, "usi::engine", format_args!("koma-usi: search stopped"));
        assert_eq!(line, "[debug usi::engine] koma-usi: search stopped");
    }
}
