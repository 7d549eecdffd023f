//! `koma perft`, `koma moves`, `koma outcome`: the rules core on the
//! command line. Other tools parse this output, so its format is fixed.

use anyhow::Result;
use clap::Args;
use koma::bad;
use rules::{EndRules, ImpasseRule, Notation, Position, Variant};
use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct PositionArgs {
    /// shogi, sho or dai.
    #[arg(long, default_value = "shogi")]
    variant: String,
    /// Start from this SFEN instead of the start position.
    #[arg(long)]
    sfen: Option<String>,
    /// Moves played from the position first (in --notation).
    #[arg(long, num_args = 1.., allow_hyphen_values = false)]
    moves: Vec<String>,
    /// Move notation of input and output: usi (`7g7f`, dai `8m7l8m`) or
    /// xboard (HaChu's: `g3g4`, `h3g4,g4h3`, `@@@@`).
    #[arg(long, default_value = "usi")]
    notation: String,
}

fn parse_variant(name: &str) -> Result<Variant> {
    name.parse::<Variant>().map_err(|e| bad(e.to_string()))
}

fn parse_notation(name: &str) -> Result<Notation> {
    name.parse::<Notation>().map_err(|e| bad(e.to_string()))
}

impl PositionArgs {
    fn given(&self) -> bool {
        self.sfen.is_some() || !self.moves.is_empty()
    }

    fn position(&self) -> Result<Position> {
        let variant = parse_variant(&self.variant)?;
        let notation = parse_notation(&self.notation)?;
        let mut pos = match &self.sfen {
            Some(s) => Position::from_sfen(variant, s).map_err(|e| bad(format!("bad SFEN '{s}': {e}")))?,
            None => Position::startpos(variant),
        };
        for (i, m) in self.moves.iter().enumerate() {
            pos.play_text(m, notation).map_err(|e| bad(format!("move {} ({m}): {e}", i + 1)))?;
        }
        Ok(pos)
    }
}

#[derive(Args)]
pub struct PerftArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// Plies to count.
    #[arg(long)]
    depth: u32,
    /// One `move count` line per root move before the total.
    #[arg(long)]
    divide: bool,
}

pub fn perft(args: PerftArgs) -> Result<ExitCode> {
    let mut pos = args.position.position()?;
    let notation = parse_notation(&args.position.notation)?;
    let start = Instant::now();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let nodes = if args.divide {
        let mut rows: Vec<(String, u64)> =
            rules::divide(&mut pos, args.depth).into_iter().map(|(m, n)| (pos.move_text(m, notation), n)).collect();
        rows.sort();
        for (m, n) in &rows {
            writeln!(out, "{m} {n}")?;
        }
        rows.iter().map(|r| r.1).sum()
    } else {
        rules::perft(&mut pos, args.depth)
    };
    let secs = start.elapsed().as_secs_f64();
    eprintln!("perft {} in {:.3} s ({:.1} Mnodes/s)", args.depth, secs, nodes as f64 / secs.max(1e-9) / 1e6);
    writeln!(out, "nodes {nodes}")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct MovesArgs {
    #[command(flatten)]
    position: PositionArgs,
}

fn sorted_moves(pos: &Position, notation: Notation) -> String {
    let mut moves: Vec<String> = pos.legal_moves().iter().map(|&m| pos.move_text(m, notation)).collect();
    moves.sort();
    moves.join(" ")
}

pub fn moves(args: MovesArgs) -> Result<ExitCode> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    let notation = parse_notation(&args.position.notation)?;
    if args.position.given() {
        let pos = args.position.position()?;
        writeln!(out, "{}", sorted_moves(&pos, notation))?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let variant = parse_variant(&args.position.variant)?;
    let failed = answer_lines(&mut out, |line| match rules::parse_position_with(variant, line.trim(), notation) {
        Ok(pos) => Answer::Text(format!("{line}\t{}", sorted_moves(&pos, notation))),
        Err(e) => Answer::Bad(e.to_string()),
    })?;
    out.flush()?;
    Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

/// Answers standard input line by line. Lines are read as bytes, so that a
/// line that is not UTF-8 is one bad line rather than the end of the run.
/// Blank lines are skipped; a bad line is answered `error line <n>: <message>`
/// (and told on stderr). Returns whether any line was bad.
fn answer_lines(out: &mut impl Write, mut answer: impl FnMut(&str) -> Answer) -> Result<bool> {
    let mut input = std::io::stdin().lock();
    let mut bytes = Vec::new();
    let mut failed = false;
    for n in 1.. {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes)? == 0 {
            break;
        }
        let line = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let reply = match std::str::from_utf8(line) {
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => answer(text),
            Err(e) => Answer::Bad(format!("not UTF-8 text ({e})")),
        };
        match reply {
            Answer::Text(t) => writeln!(out, "{t}")?,
            Answer::Bad(msg) => {
                failed = true;
                writeln!(out, "error line {n}: {msg}")?;
                eprintln!("koma: line {n}: {msg}");
            }
        }
    }
    Ok(failed)
}

#[derive(Args)]
pub struct OutcomeArgs {
    /// shogi, sho or dai.
    #[arg(long, default_value = "shogi")]
    variant: String,
    /// Impasse rule: 27 (declaration with `win`) or 24 (points when both
    /// kings have entered); default 27. Or give --entering-king-rule.
    #[arg(long)]
    impasse: Option<u32>,
    /// Entering king rule by YaneuraOu's name (USI `EnteringKingRule`): NoEnteringKing,
    /// CSARule24, CSARule27 (= --impasse 27) or TryRule; docs/rules.md.
    #[arg(long)]
    entering_king_rule: Option<String>,
    /// Game length in plies (SFEN move number - 1) that ends in a draw.
    #[arg(long)]
    max_moves: Option<u32>,
    /// Move notation of the input: usi or xboard (HaChu's).
    #[arg(long, default_value = "usi")]
    notation: String,
}

/// The answer to one input line of `koma moves` or `koma outcome`: the
/// text to print, or what is wrong with the line.
enum Answer {
    Text(String),
    Bad(String),
}

fn outcome_line(variant: Variant, rules: &EndRules, notation: Notation, line: &str) -> Answer {
    // `<position>\t<moves>`, or one field `startpos moves ...` / `sfen ... moves ...`.
    let (position, moves) = line.split_once('\t').unwrap_or_else(|| match line.find(" moves ") {
        Some(i) => (&line[..i], &line[i + " moves ".len()..]),
        None => (line.strip_suffix(" moves").unwrap_or(line), ""),
    });
    let position = position.trim();
    let pos = if position == "startpos" {
        Ok(Position::startpos(variant))
    } else {
        let sfen = position.strip_prefix("sfen ").unwrap_or(position);
        Position::from_sfen(variant, sfen)
    };
    let mut pos = match pos {
        Ok(p) => p,
        Err(e) => return Answer::Bad(format!("bad SFEN '{position}': {e}")),
    };
    let moves: Vec<&str> = moves.split_whitespace().collect();
    for (i, &m) in moves.iter().enumerate() {
        let ply = i + 1;
        if pos.outcome(rules).is_some() {
            return Answer::Text(format!("error illegal_move {m} ply {ply}"));
        }
        if m == "win" {
            // Judged by the entering king rule: a win, or a draw by the 24-point
            // declaration; the amateur 24-point adjudication has no declaration.
            let declared = if rules.impasse == ImpasseRule::Points24 { None } else { pos.declaration(rules.impasse) };
            if let (Some(o), true) = (declared, ply == moves.len()) {
                return Answer::Text(o.to_text());
            }
            return Answer::Text(format!("error illegal_move win ply {ply}"));
        }
        if pos.play_text(m, notation).is_err() {
            return Answer::Text(format!("error illegal_move {m} ply {ply}"));
        }
    }
    Answer::Text(match pos.outcome(rules) {
        Some(o) => o.to_text(),
        None => "none ongoing".to_string(),
    })
}

pub fn outcome(args: OutcomeArgs) -> Result<ExitCode> {
    let variant = parse_variant(&args.variant)?;
    let notation = parse_notation(&args.notation)?;
    let impasse = match (args.impasse, args.entering_king_rule.as_deref()) {
        (Some(_), Some(_)) => return Err(bad("give --impasse or --entering-king-rule, not both".to_string())),
        (None, Some(name)) => name.parse().map_err(|e| bad(format!("--entering-king-rule: {e}")))?,
        (None | Some(27), None) => ImpasseRule::Declaration27,
        (Some(24), None) => ImpasseRule::Points24,
        (Some(n), None) => return Err(bad(format!("--impasse must be 24 or 27, not {n}"))),
    };
    let rules = EndRules { impasse, max_plies: args.max_moves };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let failed = answer_lines(&mut out, |line| outcome_line(variant, &rules, notation, line))?;
    out.flush()?;
    Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS })
}
