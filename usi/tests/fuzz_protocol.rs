//! Fuzzing the engine's protocol loops in process: random streams of USI and XBoard
//! commands (valid ones with small searches on the uniform evaluator, options at and past
//! their ranges, position lines and SFENs of random games mutated, malformed words, huge
//! numbers and tokens, lines that are not UTF-8) go through `Usi::run` and `Xboard::run`.
//! No stream may panic the engine or hang it (a time bound per stream; one that hangs
//! aborts the run), every output line is one the protocol defines and is short (an
//! error quotes a long token cut short), and a USI `bestmove` names a legal move.
//! Bounded by default; `KOMA_FUZZ_CASES=<n>` runs n streams a protocol (`cargo test
//! --release -p koma-usi --test fuzz_protocol -- --nocapture` prints the counts).

#[path = "../../rules/tests/support/fuzz_budget.rs"]
mod fuzz_budget;

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fuzz_budget::{cases, more, time_cap, Watchdog};
use rules::{Position, Variant};
use search::Rng;
use usi::ProtocolOutput;

/// Longest output line accepted: option and feature lines, a short PV, the places
/// `ModelFile=auto` looked at, an error that quotes a command cut short.
const MAX_OUTPUT_LINE: usize = 1500;

/// What the engine wrote, shared with the output it writes through.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap()).lines().map(str::to_string).collect()
    }
}

/// A line of a stream that is not sent: the input waits there until the engine has
/// answered with a move (or [`WAIT_LIMIT`] passed), so that a search can end before the
/// next command (XBoard answers `go` while later commands are read).
const WAIT: &str = "#wait";
const WAIT_LIMIT: Duration = Duration::from_millis(500);

/// The stream as the engine reads it, pausing at each [`WAIT`] line.
struct Paced {
    bytes: Vec<u8>,
    at: usize,
    output: Capture,
}

impl Paced {
    fn moves_answered(&self) -> usize {
        self.output.lines().iter().filter(|l| l.starts_with("move ") || l.starts_with("bestmove ")).count()
    }
}

impl std::io::Read for Paced {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let marker = format!("{WAIT}\n");
        if self.bytes[self.at..].starts_with(marker.as_bytes()) {
            let (before, start) = (self.moves_answered(), Instant::now());
            while self.moves_answered() == before && start.elapsed() < WAIT_LIMIT {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.at += marker.len();
        }
        let rest = &self.bytes[self.at..];
        let end = rest.windows(marker.len() + 1).position(|w| w[0] == b'\n' && &w[1..] == marker.as_bytes());
        let n = end.map_or(rest.len(), |e| e + 1).min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

/// A number at an edge: small, past a range, past every integer type, negative, not one.
fn number(rng: &mut Rng) -> String {
    let edges = ["0", "1", "2", "5", "10", "-1", "4294967296", "18446744073709551616", "1e9", "NaN", "x", ""];
    match rng.below(3) {
        0 => pick(rng, &edges).to_string(),
        _ => rng.below(50).to_string(),
    }
}

/// A token that is not what was asked for: long, not ASCII, a separator.
fn junk(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => "x".repeat(1 + rng.below(200_000)),
        1 => "歩".repeat(1 + rng.below(100)),
        2 => pick(rng, &["moves", "sfen", "startpos", "value", "name", "=", "@@@@", "P@e5", "+", "\t"]).to_string(),
        3 => number(rng),
        _ => (0..1 + rng.below(8)).map(|_| (b'!' + rng.below(94) as u8) as char).collect(),
    }
}

/// A random game of `variant` and its moves (USI or XBoard text).
fn game(rng: &mut Rng, variant: Variant, xboard: bool) -> (Position, Vec<String>) {
    let mut pos = Position::startpos(variant);
    let mut moves = Vec::new();
    let plies = rng.below(if variant == Variant::Dai { 12 } else { 40 });
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() || pos.outcome(&Default::default()).is_some() {
            break;
        }
        let mv = legal[rng.below(legal.len())];
        moves.push(if xboard { pos.to_xboard(mv) } else { mv.to_usi() });
        pos.play(mv);
    }
    (pos, moves)
}

/// `text` with a few characters replaced, inserted or deleted.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..rng.below(3) {
        let at = rng.below(chars.len() + 1);
        match rng.below(3) {
            0 if at < chars.len() => chars[at] = (b' ' + rng.below(95) as u8) as char,
            1 => chars.insert(at, pick(rng, &["9", "+", " ", "a", "*", "0"]).chars().next().unwrap()),
            _ if at < chars.len() => {
                chars.remove(at);
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

/// One USI command line (bytes: some are not UTF-8).
fn usi_command(rng: &mut Rng, v: &mut Variant) -> Vec<u8> {
    let options = usi::options::SPECS.iter().map(|s| s.name).collect::<Vec<_>>();
    let line = match rng.below(14) {
        0 => pick(rng, &["usi", "isready", "usinewgame", "stop", "ponderhit", "gameover win", "debug", "quit"]).into(),
        1 | 2 => {
            let (_, moves) = game(rng, *v, false);
            let line = format!("position startpos moves {}", moves.join(" "));
            if rng.bernoulli(0.5) {
                mutate(rng, &line)
            } else {
                line
            }
        }
        3 => {
            let (pos, moves) = game(rng, *v, false);
            let line = format!("position sfen {} moves {}", pos.to_sfen(), moves.join(" "));
            mutate(rng, &line)
        }
        4..=6 => {
            let go = ["nodes", "depth", "movetime", "btime", "wtime", "byoyomi", "binc", "winc", "movestogo"];
            let mut line = String::from("go");
            if rng.bernoulli(0.8) {
                line += &format!(" nodes {}", 1 + rng.below(48));
            }
            for _ in 0..rng.below(3) {
                line += &format!(" {} {}", pick(rng, &go), number(rng));
            }
            if rng.bernoulli(0.15) {
                line += pick(rng, &[" infinite", " ponder", " mate 3", " searchmoves 7g7f"]);
            }
            line
        }
        7 | 8 => {
            let name = if rng.bernoulli(0.9) { pick(rng, &options).to_string() } else { junk(rng) };
            let value = match name.as_str() {
                // Keep the evaluator uniform and the device the CPU: the fuzz is of the
                // protocol, not of loading networks (tests/model_file.rs).
                "ModelFile" => pick(rng, &["<uniform>", "", "no/such/model.json"]).to_string(),
                "Device" => pick(rng, &["cpu", "auto", "tpu", ""]).to_string(),
                "Threads" | "BatchSize" | "TorchThreads" => pick(rng, &["1", "2", "0", "-3", "1000000", "x"]).into(),
                "USI_Hash" => pick(rng, &["16", "64", "15", "2000000", "x"]).into(),
                "UCI_Variant" => {
                    let name = pick(rng, &["shogi", "sho", "dai", "chess", "SHO"]);
                    if let Ok(new) = name.parse() {
                        *v = new;
                    }
                    name.to_string()
                }
                _ => number(rng),
            };
            format!("setoption name {name} value {value}")
        }
        9 => format!("setoption {}", junk(rng)),
        10 => return vec![b'g', b'o', b' ', 0xff, 0xfe],
        11 => format!("{} {}", junk(rng), junk(rng)),
        _ => format!("position {}", junk(rng)),
    };
    line.into_bytes()
}

/// One XBoard command line.
fn xboard_command(rng: &mut Rng, v: &mut Variant) -> Vec<u8> {
    let line = match rng.below(14) {
        0 => {
            pick(rng, &["xboard", "protover 2", "new", "force", "?", "post", "nopost", "hard", "undo", "remove"]).into()
        }
        1 => {
            let name = pick(rng, &["shogi", "sho", "dai", "shoshogi", "daishogi", "chess", ""]);
            if let Ok(new) = name.parse() {
                *v = new;
            }
            format!("variant {name}")
        }
        2 | 3 => {
            let (_, moves) = game(rng, *v, true);
            let mv = moves.last().cloned().unwrap_or_else(|| "@@@@".into());
            let mv = if rng.bernoulli(0.3) { mutate(rng, &mv) } else { mv };
            if rng.bernoulli(0.5) {
                format!("usermove {mv}")
            } else {
                mv
            }
        }
        // A game in force mode from the start, then the engine's move.
        4 => {
            let (_, moves) = game(rng, *v, true);
            let usermove = if rng.bernoulli(0.5) { "usermove " } else { "" };
            let moves: Vec<String> = moves.iter().map(|m| format!("{usermove}{m}")).collect();
            format!("new\nsd 1\nforce\n{}\ngo\n{WAIT}", moves.join("\n"))
        }
        5 => format!("sd {}", pick(rng, &["1", "2", "0", "101", "-1", "x"])),
        6 => format!("st {}", pick(rng, &["0.01", "0.05", "0", "-1", "1e9", "NaN"])),
        7 => format!("level {} {} {}", number(rng), pick(rng, &["0:01", "1", "0", "99999999:99", "x"]), number(rng)),
        8 => format!("{} {}", pick(rng, &["time", "otim", "ping", "memory", "cores"]), number(rng)),
        9 => {
            let (pos, _) = game(rng, *v, true);
            let sfen = pos.to_sfen();
            format!("setboard {}", if rng.bernoulli(0.5) { mutate(rng, &sfen) } else { sfen })
        }
        10 => {
            format!("option {}={}", pick(rng, &["Threads", "MultiPV", "InfoInterval", "NodesLimit", "x"]), number(rng))
        }
        11 => format!("result {} {{x}}", pick(rng, &["1-0", "0-1", "1/2-1/2", "*"])),
        12 => return vec![b'u', b's', b'e', b'r', 0xc3, 0x28],
        _ => format!("{} {}", junk(rng), junk(rng)),
    };
    line.into_bytes()
}

/// A stream: the uniform evaluator first (mostly), commands, then `quit` (mostly; else
/// the input just ends).
fn stream(rng: &mut Rng, xboard: bool) -> (Vec<u8>, Variant) {
    let mut v = Variant::Shogi;
    let mut bytes = Vec::new();
    if rng.bernoulli(0.95) {
        bytes.extend_from_slice(if xboard {
            b"xboard\noption ModelFile=<uniform>\noption InfoInterval=0\nsd 1\n".as_slice()
        } else {
            b"setoption name ModelFile value <uniform>\nsetoption name Threads value 1\n".as_slice()
        });
    }
    for _ in 0..1 + rng.below(14) {
        let line = if xboard { xboard_command(rng, &mut v) } else { usi_command(rng, &mut v) };
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
    }
    if rng.bernoulli(0.9) {
        bytes.extend_from_slice(b"quit\n");
    }
    (bytes, v)
}

/// The legal moves (USI and XBoard text) of every position the stream's lines could
/// leave the engine in, as far as it names them: the start of each variant and every
/// position line and SFEN that reads.
fn moves_named(bytes: &[u8]) -> HashSet<String> {
    let mut positions: Vec<Position> = Variant::ALL.iter().map(|&v| Position::startpos(v)).collect();
    for line in String::from_utf8_lossy(bytes).lines() {
        let line = line.trim_start();
        for v in Variant::ALL {
            if let Some(rest) = line.strip_prefix("position ") {
                positions.extend(rules::parse_position_command(v, rest).ok());
            }
            if let Some(rest) = line.strip_prefix("setboard ") {
                positions.extend(Position::from_sfen(v, rest).ok());
            }
        }
    }
    // XBoard positions after the moves of the stream: any legal move of any position
    // reached by a prefix of a random game is a legal text; accept the syntax there.
    let mut out = HashSet::new();
    for p in &positions {
        for mv in p.legal_moves() {
            out.insert(mv.to_usi());
            out.insert(p.to_xboard(mv));
        }
    }
    out
}

const USI_OUTPUT: [&str; 7] = ["id ", "option ", "usiok", "readyok", "info ", "bestmove ", "checkmate "];

fn check_usi_output(lines: &[String], named: &HashSet<String>) -> Result<(), String> {
    for l in lines {
        if !USI_OUTPUT.iter().any(|p| l.starts_with(p)) {
            return Err(format!("not a USI line: {l:?}"));
        }
        if let Some(mv) = l.strip_prefix("bestmove ").and_then(|r| r.split_whitespace().next()) {
            if mv != "resign" && mv != "win" && !named.contains(mv) {
                return Err(format!("bestmove {mv} is no legal move of any position given"));
            }
        }
    }
    Ok(())
}

fn check_xboard_output(lines: &[String]) -> Result<(), String> {
    let words = [
        "feature ",
        "move ",
        "Error (",
        "Illegal move",
        "pong",
        "tellusererror ",
        "telluser ",
        "resign",
        "1-0 ",
        "0-1 ",
        "1/2-1/2 ",
        "#",
    ];
    for l in lines {
        let thinking = l.split_whitespace().next().is_some_and(|w| w.parse::<i64>().is_ok());
        if !thinking && !words.iter().any(|w| l.starts_with(w)) {
            return Err(format!("not an XBoard line: {l:?}"));
        }
    }
    Ok(())
}

/// The time a stream may take: [`fuzz_budget::slow`] for the commands, and as much again
/// for each search the stream waits for (`#wait` after a `go`), which may legitimately run
/// its whole limit on a busy machine.
fn stream_budget(bytes: &[u8]) -> Duration {
    let waits = String::from_utf8_lossy(bytes).lines().filter(|l| l.trim() == WAIT).count() as u32;
    fuzz_budget::slow() * (1 + waits)
}

fn fuzz(protocol: &str, seed: u64, default_cases: u64) {
    let xboard = protocol == "xboard";
    let mut rng = Rng::new(fuzz_budget::seed(seed));
    let watchdog = Watchdog::new(&format!("{protocol} streams"));
    let (n, cap, start) = (cases(default_cases), time_cap(Duration::from_secs(10)), Instant::now());
    let (mut tried, mut lines_out, mut moves) = (0u64, 0usize, 0usize);
    while more(tried, n, start, cap) {
        let (bytes, _) = stream(&mut rng, xboard);
        let shown = || {
            let text = String::from_utf8_lossy(&bytes);
            text.lines().map(|l| rules::excerpt(l).to_string()).collect::<Vec<_>>().join("\n")
        };
        let capture = Capture::default();
        let out = ProtocolOutput::new(Box::new(capture.clone()));
        let input = std::io::BufReader::new(Paced { bytes: bytes.clone(), at: 0, output: capture.clone() });
        let (_, took) = watchdog.case(shown, move || {
            if xboard {
                usi::xboard::Xboard::new(out).run(input);
            } else {
                usi::usi::Usi::new(out).run(input);
            }
        });
        let lines = capture.lines();
        let checked = if xboard { check_xboard_output(&lines) } else { check_usi_output(&lines, &moves_named(&bytes)) };
        let too_long = lines.iter().find(|l| l.len() > MAX_OUTPUT_LINE);
        let verdict = match (checked, too_long) {
            (Err(why), _) => Err(why),
            (_, Some(l)) => Err(format!("a line of {} bytes: {}", l.len(), rules::excerpt(l))),
            _ if took > stream_budget(&bytes) => Err(format!("the stream took {took:?}")),
            _ => Ok(()),
        };
        if let Err(why) = verdict {
            panic!("{protocol}: {why}\n--- input ---\n{}\n--- output ---\n{}", shown(), lines.join("\n"));
        }
        tried += 1;
        lines_out += lines.len();
        moves += lines.iter().filter(|l| l.starts_with("bestmove ") || l.starts_with("move ")).count();
    }
    println!("fuzz {protocol} streams: {tried} streams, {lines_out} lines answered, {moves} of them moves");
}

#[test]
fn fuzz_usi_streams() {
    fuzz("usi", 0x0051_0001, 1000);
}

#[test]
fn fuzz_xboard_streams() {
    fuzz("xboard", 0x0051_0002, 400);
}
