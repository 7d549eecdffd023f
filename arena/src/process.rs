//! An engine child process spoken to line by line: stdin for commands, a reader thread
//! turning stdout into a channel of lines, so that every wait has a deadline. A process
//! that closes its stdout (exits, crashes) shows up as [`ProcessError::Exited`]; one that
//! does not answer in time as [`ProcessError::Timeout`].

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Why talking to an engine process failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start '{command}': {reason}")]
    Spawn { command: String, reason: String },
    #[error("the engine exited ({status})")]
    Exited { status: String },
    #[error("the engine did not answer in time")]
    Timeout,
}

/// A running engine.
pub struct EngineProcess {
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    /// The engine's lines, each with when it came.
    lines: Receiver<(Instant, String)>,
    /// A line read from `lines` but not yet due (its lag not yet passed at a deadline).
    pending: Option<(Instant, String)>,
    /// How long each line takes to reach the arena (a simulated network).
    lag: Duration,
    /// Last lines exchanged, for error messages (`> sent`, `< received`).
    pub transcript: std::collections::VecDeque<String>,
    debug: bool,
}

const TRANSCRIPT_LINES: usize = 40;

impl EngineProcess {
    /// Starts `argv` (program and arguments) in `cwd`. Its stderr is discarded unless the
    /// environment variable `KOMA_ARENA_DEBUG` is set, which also echoes the protocol
    /// as `log` notes (target `arena::process`).
    pub fn spawn(argv: &[String], cwd: Option<&Path>) -> Result<EngineProcess, ProcessError> {
        let command = argv.join(" ");
        let spawn_err = |reason: String| ProcessError::Spawn { command: command.clone(), reason };
        let Some((program, args)) = argv.split_first() else {
            return Err(spawn_err("empty command".into()));
        };
        let debug = std::env::var_os("KOMA_ARENA_DEBUG").is_some();
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(if debug {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| spawn_err(e.to_string()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("engine-reader".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf).trim_end_matches(['\r', '\n']).to_string();
                            if tx.send((Instant::now(), line)).is_err() {
                                break;
                            }
                        }
                    }
                }
            })
            .map_err(|e| spawn_err(e.to_string()))?;
        Ok(EngineProcess {
            command,
            child,
            stdin,
            lines: rx,
            pending: None,
            lag: Duration::ZERO,
            transcript: Default::default(),
            debug,
        })
    }

    pub fn command(&self) -> &str {
        &self.command
    }

    fn note(&mut self, line: String) {
        if self.debug {
            log::info!("[{}] {line}", self.command);
        }
        if self.transcript.len() == TRANSCRIPT_LINES {
            self.transcript.pop_front();
        }
        self.transcript.push_back(line);
    }

    /// Sends one line. A closed pipe means the engine is gone.
    pub fn send(&mut self, line: &str) -> Result<(), ProcessError> {
        self.note(format!("> {line}"));
        let ok = match self.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{line}").and_then(|_| stdin.flush()).is_ok(),
            None => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.exited())
        }
    }

    /// Delays every line from now on by `lag` (a simulated network).
    pub fn set_lag(&mut self, lag: Duration) {
        self.lag = lag;
    }

    /// The next line, waiting until `deadline`; with a lag, a line is due `lag` after it
    /// came (one not due by the deadline waits for the next call).
    pub fn recv(&mut self, deadline: Instant) -> Result<String, ProcessError> {
        let (came, line) = match self.pending.take() {
            Some(p) => p,
            None => match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(p) => p,
                Err(RecvTimeoutError::Timeout) => return Err(ProcessError::Timeout),
                Err(RecvTimeoutError::Disconnected) => return Err(self.exited()),
            },
        };
        let due = came + self.lag;
        if due > deadline {
            std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            self.pending = Some((came, line));
            return Err(ProcessError::Timeout);
        }
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        self.note(format!("< {line}"));
        Ok(line)
    }

    /// Reads lines until `accept` returns `Some`, or the deadline passes.
    pub fn recv_until<T>(
        &mut self,
        deadline: Instant,
        mut accept: impl FnMut(&str) -> Option<T>,
    ) -> Result<T, ProcessError> {
        loop {
            let line = self.recv(deadline)?;
            if let Some(t) = accept(&line) {
                return Ok(t);
            }
        }
    }

    /// Drops the lines already waiting (the engine's chatter between requests).
    pub fn drain(&mut self) {
        self.pending = None;
        while let Ok((_, line)) = self.lines.try_recv() {
            self.note(format!("< {line}"));
        }
    }

    /// Whether the process has exited.
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    fn exited(&mut self) -> ProcessError {
        // Give the process a moment to be reaped, so that the status is known.
        let until = Instant::now() + Duration::from_millis(200);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s.to_string(),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                Ok(None) => break "output closed".to_string(),
                Err(e) => break e.to_string(),
            }
        };
        ProcessError::Exited { status }
    }

    /// Sends `quit_line` (if any), waits up to `grace` for the process to exit, then kills it.
    pub fn shutdown(&mut self, quit_line: Option<&str>, grace: Duration) {
        if let Some(q) = quit_line {
            let _ = self.send(q);
        }
        self.stdin = None;
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_delays_every_line_and_a_line_not_due_waits_for_the_next_call() {
        let argv: Vec<String> = ["sh", "-c", "echo first; echo second"].iter().map(|s| s.to_string()).collect();
        let mut engine = EngineProcess::spawn(&argv, None).unwrap();
        engine.set_lag(Duration::from_millis(300));
        let start = Instant::now();
        // Both lines are written at once; neither is due within 100 ms.
        assert!(matches!(engine.recv(start + Duration::from_millis(100)), Err(ProcessError::Timeout)));
        assert_eq!(engine.recv(start + Duration::from_secs(5)).unwrap(), "first");
        assert!(start.elapsed() >= Duration::from_millis(300), "{:?}", start.elapsed());
        assert_eq!(engine.recv(start + Duration::from_secs(5)).unwrap(), "second");
        assert!(start.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn lag_is_an_arena_key_of_engines_only() {
        let spec: crate::spec::PlayerSpec = "e=usi:/bin/true,lag=250,Hash=16".parse().unwrap();
        assert_eq!(spec.lag, Duration::from_millis(250));
        assert!("e=usi:/bin/true,lag=soon".parse::<crate::spec::PlayerSpec>().is_err());
        let koma = "k=koma:net.safetensors,lag=250".parse::<crate::spec::PlayerSpec>();
        assert!(koma.is_err(), "koma players have no process to delay");
    }
}
