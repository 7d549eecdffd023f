//! Drives the `koma-usi` binary over stdin/stdout as a GUI does.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_koma-usi")
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Everything read so far (for failure messages).
    pub log: Vec<String>,
}

impl Engine {
    pub fn start(args: &[&str]) -> Engine {
        Engine::spawn(exe(), args)
    }

    /// Any engine program.
    pub fn spawn(program: &str, args: &[&str]) -> Engine {
        Engine::from_command(Command::new(program).args(args))
    }

    /// A prepared command (environment, working folder).
    pub fn from_command(command: &mut Command) -> Engine {
        Engine::with_stderr(command, Stdio::null())
    }

    /// [`Engine::from_command`] with the engine's stderr going to `stderr`.
    pub fn with_stderr(command: &mut Command, stderr: Stdio) -> Engine {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr);
        // A binary copied a moment ago can be "busy" (ETXTBSY) while another test thread's
        // fork still holds the copy's write handle: try again briefly.
        let mut tries = 0;
        let mut child = loop {
            match command.spawn() {
                Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => break other.unwrap_or_else(|e| panic!("start {command:?}: {e}")),
            }
        };
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine { child, stdin, lines: rx, log: Vec::new() }
    }

    pub fn send(&mut self, cmd: &str) {
        self.log.push(format!("> {cmd}"));
        let s = self.stdin.as_mut().expect("stdin open");
        writeln!(s, "{cmd}").expect("write to engine");
        s.flush().unwrap();
    }

    /// Sends raw bytes (a line that need not be UTF-8); a newline is added.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.log.push(format!("> {}", String::from_utf8_lossy(bytes)));
        let s = self.stdin.as_mut().expect("stdin open");
        s.write_all(bytes).and_then(|_| s.write_all(b"\n")).expect("write to engine");
        s.flush().unwrap();
    }

    /// Reads lines until one satisfies `pred`; returns it. Panics after `secs`.
    pub fn expect(&mut self, secs: f64, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.log.push(l.clone());
                    if pred(&l) {
                        return l;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("timeout after {secs}s; log:\n{}", self.tail()),
                Err(RecvTimeoutError::Disconnected) => panic!("engine closed its output; log:\n{}", self.tail()),
            }
        }
    }

    /// Sends `cmd`, then reads lines until one satisfies `pred`; returns it.
    pub fn ask(&mut self, cmd: &str, secs: f64, pred: impl Fn(&str) -> bool) -> String {
        self.send(cmd);
        self.expect(secs, pred)
    }

    /// Lines until one starts with `prefix`, all returned (the last is the match).
    pub fn until(&mut self, secs: f64, prefix: &str) -> Vec<String> {
        let start = self.log.len();
        self.expect(secs, |l| l.starts_with(prefix));
        self.log[start..].iter().filter(|l| !l.starts_with("> ")).cloned().collect()
    }

    /// Sends `cmd`, then [`Engine::until`] `prefix`.
    pub fn ask_until(&mut self, cmd: &str, secs: f64, prefix: &str) -> Vec<String> {
        self.send(cmd);
        self.until(secs, prefix)
    }

    pub fn tail(&self) -> String {
        let n = self.log.len();
        self.log[n.saturating_sub(40)..].join("\n")
    }

    /// Closes stdin and waits for the process (panics if it does not exit in `secs`).
    pub fn wait_exit(&mut self, secs: f64) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("engine did not exit; log:\n{}", self.tail());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// `usi` .. `usiok`, options, `isready` .. `readyok`.
    pub fn handshake(&mut self, options: &[(&str, &str)]) -> Vec<String> {
        self.send("usi");
        self.until(10.0, "usiok");
        for (n, v) in options {
            self.send(&format!("setoption name {n} value {v}"));
        }
        self.send("isready");
        self.until(120.0, "readyok")
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tiny untrained checkpoint written by `koma-usi --init-model` (shared by tests).
pub fn tiny_checkpoint(variant: &str) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo_root().join("target").join("koma-usi-test");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = dir.join(format!("tiny-{variant}"));
    let meta = stem.with_extension("json");
    if !meta.is_file() {
        let tmp = dir.join(format!("tiny-{variant}-{}", std::process::id()));
        let st = Command::new(exe())
            .args(["--init-model", tmp.to_str().unwrap(), "--variant", variant])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        // Both files under the final name (the json names its weights file).
        let text = std::fs::read_to_string(tmp.with_extension("json")).unwrap();
        let tmp_name = tmp.file_name().unwrap().to_string_lossy().into_owned();
        let final_name = stem.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::rename(tmp.with_extension("safetensors"), stem.with_extension("safetensors")).unwrap();
        std::fs::write(&meta, text.replace(&format!("{tmp_name}.safetensors"), &format!("{final_name}.safetensors")))
            .unwrap();
        std::fs::remove_file(tmp.with_extension("json")).unwrap();
    }
    meta
}

/// Whether a missing external program should fail the test (CI) or skip it.
pub fn require(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{what} is missing and CI is set: install it (scripts/install-engines.sh, scripts/setup.sh)");
    }
    eprintln!("skipped: {what} is missing");
    false
}

/// The repository's `.venv` Python if it imports cshogi (scripts/setup.sh installs it).
pub fn python_with_cshogi() -> Option<PathBuf> {
    let py = repo_root().join(".venv/bin/python");
    let ok = py.exists() && Command::new(&py).args(["-c", "import cshogi"]).status().is_ok_and(|s| s.success());
    ok.then_some(py)
}
