//! What a match writes: `games.jsonl` (one JSON object per game, as games finish), the
//! game records (standard shogi: `kif/NNNNN.kif` in Shift_JIS and all games in
//! `games.csa`; every
//! variant: the USI moves in `games.jsonl`), `report.md` with the tables, and `elo.png`
//! and `elo.svg` for a series of checkpoints.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rules::records::{self, Encoding, EndReason, Format, GameEnd, GameInfo, Record, RecordedMove, Start};
use rules::{Color, EndCause, Move, Position, Reason, Variant};
use serde_json::json;

use crate::stats::{ratings, SprtStatus, Wdl};
use crate::{ArenaError, MatchConfig};

/// One finished game as the scheduler hands it to the writer.
#[derive(Clone, Debug)]
pub struct GameRow {
    pub number: usize,
    pub pair: usize,
    pub sente: String,
    pub gote: String,
    pub sente_index: usize,
    pub gote_index: usize,
    pub winner: Option<Color>,
    pub reason: EndCause,
    pub detail: Option<String>,
    pub opening: String,
    pub start_sfen: String,
    /// From the opening's base position, opening moves first.
    pub moves: Vec<Move>,
    pub opening_plies: usize,
    pub times_ms: Vec<u64>,
    pub final_pos: Position,
}

/// Results of one pair, from the first player's side.
#[derive(Clone, Debug, PartialEq)]
pub struct PairResult {
    pub first: String,
    pub second: String,
    pub wdl: Wdl,
    /// Reasons the games ended, with counts.
    pub reasons: Vec<(EndCause, u32)>,
}

/// The outcome of a match.
#[derive(Clone, Debug)]
pub struct MatchReport {
    pub players: Vec<String>,
    pub pairs: Vec<PairResult>,
    /// Ratings (anchor: the first player = 0) when there are more than two players.
    pub ratings: Vec<f64>,
    /// Training steps of koma players.
    pub steps: Vec<Option<u64>>,
    pub games: usize,
    pub sprt: Option<(crate::Sprt, f64, SprtStatus)>,
    pub elapsed: Duration,
    pub out: PathBuf,
    pub plot: Option<PathBuf>,
}

pub(crate) struct Writer {
    out: PathBuf,
    jsonl: File,
    csa: Option<File>,
    variant: Variant,
    players: Vec<String>,
    pair_players: Vec<(usize, usize)>,
    results: Vec<PairResult>,
    steps: Vec<Option<u64>>,
    games: usize,
    sprt: Option<crate::Sprt>,
    settings: String,
    command_line: Option<String>,
    tc: String,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ArenaError {
    let path = path.to_path_buf();
    move |source| ArenaError::Io { path, source }
}

fn end_of(row: &GameRow) -> GameEnd {
    let reason = match row.reason {
        EndCause::Rules(Reason::Checkmate | Reason::NoMoves) => EndReason::Checkmate,
        EndCause::Resign => EndReason::Resign,
        EndCause::Rules(Reason::Repetition) => EndReason::Repetition,
        EndCause::Rules(Reason::PerpetualCheck) => EndReason::PerpetualCheck,
        EndCause::Rules(Reason::Declaration) => EndReason::Declaration,
        EndCause::Rules(Reason::Impasse) => EndReason::Impasse,
        EndCause::Rules(Reason::MaxMoves) | EndCause::Adjudicated => EndReason::MaxMoves,
        EndCause::Time | EndCause::Hang => EndReason::TimeUp,
        EndCause::IllegalMove | EndCause::FalseDeclaration | EndCause::FalseClaim | EndCause::ProtocolError => {
            EndReason::IllegalMove
        }
        EndCause::Rules(Reason::RoyalCapture | Reason::BareKing) | EndCause::Crash | EndCause::Stopped => {
            EndReason::Error
        }
    };
    let mut comments = vec![format!("koma arena: {}", row.reason)];
    if let Some(d) = &row.detail {
        comments.push(d.clone());
    }
    GameEnd { reason, winner: row.winner, time: None, comments }
}

/// The record of a standard shogi game.
pub fn record_of(row: &GameRow, tc: &str) -> Option<Record> {
    if row.final_pos.variant() != Variant::Shogi {
        return None;
    }
    let base = Position::from_sfen(Variant::Shogi, &row.start_sfen).ok()?;
    let mut rec = Record::new(Start::from_position(&base));
    for (i, &mv) in row.moves.iter().enumerate() {
        let mut m = RecordedMove::new(mv);
        if i >= row.opening_plies {
            m.time = row.times_ms.get(i - row.opening_plies).map(|&ms| Duration::from_millis(ms));
        }
        rec.moves.push(m);
    }
    rec.end = Some(end_of(row));
    rec.info = GameInfo {
        sente: Some(row.sente.clone()),
        gote: Some(row.gote.clone()),
        event: Some("koma arena".into()),
        time_control: Some(tc.to_string()),
        opening: Some(row.opening.clone()),
        ..GameInfo::default()
    };
    Some(rec)
}

impl Writer {
    /// A writer for the match `cfg`; `append` for a resumed match, whose files it adds
    /// to (its games already played are counted in with [`Writer::count`]).
    pub(crate) fn create(
        cfg: &MatchConfig,
        pairs: &[(usize, usize)],
        steps: Vec<Option<u64>>,
        append: bool,
    ) -> Result<Writer, ArenaError> {
        let open = |p: &Path| {
            let mut o = std::fs::OpenOptions::new();
            o.create(true);
            if append { o.append(true) } else { o.write(true).truncate(true) }.open(p).map_err(io(p))
        };
        let jsonl = open(&cfg.out.join("games.jsonl"))?;
        let csa = if cfg.variant == Variant::Shogi {
            std::fs::create_dir_all(cfg.out.join("kif")).map_err(io(&cfg.out))?;
            Some(open(&cfg.out.join("games.csa"))?)
        } else {
            None
        };
        let players: Vec<String> = cfg.players.iter().map(|p| p.name.clone()).collect();
        let results = pairs
            .iter()
            .map(|&(a, b)| PairResult {
                first: players[a].clone(),
                second: players[b].clone(),
                wdl: Wdl::default(),
                reasons: vec![],
            })
            .collect();
        let mut settings = String::new();
        let _ = writeln!(settings, "- variant: {}", cfg.variant);
        let _ = writeln!(
            settings,
            "- time control: {} (margin {} ms, hang timeout {} s)",
            cfg.tc,
            cfg.time_margin.as_millis(),
            cfg.hang_timeout.as_secs()
        );
        let _ = writeln!(
            settings,
            "- games per pair: {}, openings: {}, concurrency: {}",
            cfg.games,
            cfg.openings.len(),
            cfg.concurrency
        );
        let _ = writeln!(
            settings,
            "- end rules: {:?}, maximum length {} plies",
            cfg.end_rules.impasse,
            cfg.end_rules.max_plies.map_or("none".to_string(), |m| m.to_string())
        );
        let _ = writeln!(settings, "- players:");
        for p in &cfg.players {
            let limit = match p.limit {
                Some(l) => format!(" (fixed {l})"),
                None => String::new(),
            };
            let from_network = match &p.kind {
                crate::spec::SpecKind::Koma { checkpoint, config, .. } => config.leaf_material_note(checkpoint),
                _ => None,
            };
            let from_network = from_network.map_or(String::new(), |note| format!("; {note}"));
            let _ = writeln!(settings, "  - `{}`: {:?}{limit}{from_network}", p.name, p.kind);
        }
        Ok(Writer {
            out: cfg.out.clone(),
            jsonl,
            csa,
            variant: cfg.variant,
            players,
            pair_players: pairs.to_vec(),
            results,
            steps,
            games: 0,
            sprt: cfg.sprt,
            settings,
            command_line: cfg.command_line.clone(),
            tc: cfg.tc.to_string(),
        })
    }

    pub(crate) fn games(&self) -> usize {
        self.games
    }

    pub(crate) fn pair_wdl(&self, pair: usize) -> Wdl {
        self.results[pair].wdl
    }

    pub(crate) fn record(&mut self, row: &GameRow) -> Result<(), ArenaError> {
        let winner = winner_word(row.winner);
        let winner_name = row.winner.map(|c| if c == Color::Sente { &row.sente } else { &row.gote });
        let obj = json!({
            "game": row.number,
            "variant": self.variant.name(),
            "sente": row.sente,
            "gote": row.gote,
            "winner": winner,
            "winner_name": winner_name,
            "reason": row.reason.name(),
            "detail": row.detail,
            "tc": self.tc,
            "opening": row.opening,
            "start": row.start_sfen,
            "opening_plies": row.opening_plies,
            "plies": row.moves.len(),
            "moves": row.moves.iter().map(|m| m.to_usi()).collect::<Vec<_>>(),
            "times_ms": row.times_ms,
        });
        let path = self.out.join("games.jsonl");
        writeln!(self.jsonl, "{obj}").and_then(|_| self.jsonl.flush()).map_err(io(&path))?;

        self.count(row.pair, row.sente_index, row.winner, row.reason);

        if let Some(rec) = record_of(row, &self.tc) {
            if let Ok(kif) = records::write_kif(&rec) {
                self.write_kif(row.number, &kif)?;
            }
            if let (Some(f), Ok(csa)) = (self.csa.as_mut(), records::write_csa(&rec)) {
                let p = self.out.join("games.csa");
                let sep = if self.games > 1 { "/\n" } else { "" };
                write!(f, "{sep}{csa}").and_then(|_| f.flush()).map_err(io(&p))?;
            }
        }
        Ok(())
    }

    /// Counts a game in its pair's results, from the pair's first player's side.
    pub(crate) fn count(&mut self, pair: usize, sente_index: usize, winner: Option<Color>, reason: EndCause) {
        self.games += 1;
        let first_color = if sente_index == self.pair_players[pair].0 { Color::Sente } else { Color::Gote };
        let res = &mut self.results[pair];
        res.wdl.count(winner, first_color);
        match res.reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => res.reasons.push((reason, 1)),
        }
    }

    /// `kif/NNNNN.kif` in Shift_JIS (cp932), the encoding Japanese programs read `.kif`
    /// files in; a game whose text Shift_JIS cannot hold (a player's name, say) goes to
    /// `kif/NNNNN.kifu` in UTF-8 instead.
    fn write_kif(&self, number: usize, text: &str) -> Result<(), ArenaError> {
        let (bytes, extension) = match records::encode_record(Format::Kif, text, Encoding::ShiftJis) {
            Ok(bytes) => (bytes, "kif"),
            Err(_) => (text_with_header(text), "kifu"),
        };
        let p = self.out.join("kif").join(format!("{number:05}.{extension}"));
        files::write_atomic(&p, &bytes).map_err(io(&p))
    }

    pub(crate) fn finish(self, elapsed: Duration) -> Result<MatchReport, ArenaError> {
        let n = self.players.len();
        let mut table = vec![vec![Wdl::default(); n]; n];
        for (k, &(a, b)) in self.pair_players.iter().enumerate() {
            let w = self.results[k].wdl;
            table[a][b].add(w);
            table[b][a].add(w.flipped());
        }
        let ratings = if n > 2 { ratings(&table, 0) } else { Vec::new() };
        let sprt = self.sprt.map(|t| {
            let r = self.results[0].wdl;
            (t, t.llr(&r), t.status(&r))
        });
        let mut report = MatchReport {
            players: self.players.clone(),
            pairs: self.results.clone(),
            ratings,
            steps: self.steps.clone(),
            games: self.games,
            sprt,
            elapsed,
            out: self.out.clone(),
            plot: None,
        };
        // A series of checkpoints: Elo against training step.
        let series: Vec<(u64, f64, f64)> = (0..n)
            .filter_map(|i| {
                let step = report.steps[i]?;
                let (elo, err) = report.rating_of(i, &table);
                Some((step, elo, err))
            })
            .collect();
        if series.len() >= 2 {
            let chart = elo_chart(&series);
            charts::write_chart(&chart, &self.out.join("elo.svg"))?;
            let p = self.out.join("elo.png");
            charts::write_chart(&chart, &p)?;
            report.plot = Some(p);
        }
        let md = report.markdown(&self.settings, self.command_line.as_deref());
        let p = self.out.join("report.md");
        std::fs::write(&p, md).map_err(io(&p))?;
        Ok(report)
    }
}

/// The chart of a series of checkpoints: (step, Elo, 95% half-width) with error bars;
/// infinite values are drawn at the edge of the chart.
fn elo_chart(points: &[(u64, f64, f64)]) -> charts::Chart {
    let series = charts::Series {
        name: String::new(),
        points: points
            .iter()
            .map(|&(step, elo, error)| charts::Point { x: step as f64, y: elo, error: Some(error) })
            .collect(),
    };
    charts::Chart {
        title: "Elo against training step".into(),
        x_label: "training step".into(),
        y_label: "Elo".into(),
        series: vec![series],
        levels: Vec::new(),
    }
}

/// The `winner` word of a `games.jsonl` row: `sente`, `gote` or `draw`.
pub fn winner_word(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::Sente) => "sente",
        Some(Color::Gote) => "gote",
        None => "draw",
    }
}

/// The winner a `winner` word of [`winner_word`] names; `None` for another word.
pub fn winner_of_word(word: &str) -> Option<Option<Color>> {
    [Some(Color::Sente), Some(Color::Gote), None].into_iter().find(|&w| winner_word(w) == word)
}

/// A KIF text as UTF-8 bytes with the first line that says so.
fn text_with_header(text: &str) -> Vec<u8> {
    records::encode_record(Format::Kif, text, Encoding::Utf8).unwrap_or_else(|_| text.as_bytes().to_vec())
}

fn fmt_elo(e: f64) -> String {
    if e.is_infinite() {
        if e > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        }
    } else if e.abs() < 0.5 {
        "0".into()
    } else {
        format!("{e:+.0}")
    }
}

impl PairResult {
    /// The columns both result tables show: games, W, D, L, score, Elo, the
    /// 95% interval and LOS.
    fn columns(&self) -> [String; 8] {
        let (lo, hi) = self.wdl.elo_interval();
        [
            self.wdl.games().to_string(),
            self.wdl.wins.to_string(),
            self.wdl.draws.to_string(),
            self.wdl.losses.to_string(),
            format!("{:.1}%", 100.0 * self.wdl.score()),
            fmt_elo(self.wdl.elo()),
            format!("[{}, {}]", fmt_elo(lo), fmt_elo(hi)),
            format!("{:.1}%", 100.0 * self.wdl.los()),
        ]
    }
}

impl MatchReport {
    /// Player indices, best rating first.
    fn rating_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.players.len()).collect();
        order.sort_by(|&a, &b| self.ratings[b].partial_cmp(&self.ratings[a]).unwrap_or(std::cmp::Ordering::Equal));
        order
    }

    /// A player's training step, `-` for none.
    fn step_text(&self, i: usize) -> String {
        self.steps[i].map_or("-".to_string(), |x| x.to_string())
    }

    /// A player's Elo for the plot: its rating with several players (error: the 95%
    /// half-width of its overall score), else its Elo difference to the other player.
    fn rating_of(&self, i: usize, table: &[Vec<Wdl>]) -> (f64, f64) {
        let mut all = Wdl::default();
        for w in &table[i] {
            all.add(*w);
        }
        let err = all.elo_error();
        if !self.ratings.is_empty() {
            (self.ratings[i], err)
        } else {
            (all.elo(), err)
        }
    }

    /// The pair table (and the ratings table with more than two players), as text.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let w = self.pairs.iter().map(|p| p.first.len() + p.second.len() + 4).max().unwrap_or(10).max(12);
        let _ = writeln!(
            s,
            "{:<w$} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6} {:>17} {:>6}  reasons",
            "pair", "games", "W", "D", "L", "score", "elo", "95% interval", "LOS"
        );
        for p in &self.pairs {
            let mut reasons = p.reasons.clone();
            reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.name().cmp(b.0.name())));
            let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
            let [games, wins, draws, losses, score, elo, interval, los] = p.columns();
            let _ = writeln!(
                s,
                "{:<w$} {games:>5} {wins:>5} {draws:>5} {losses:>5} {score:>6} {elo:>6} {interval:>17} {los:>6}  {}",
                format!("{} vs {}", p.first, p.second),
                reasons.join(", ")
            );
        }
        if !self.ratings.is_empty() {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "{:<4} {:<20} {:>7} {:>6}  (maximum likelihood, {} = 0)",
                "rank", "player", "rating", "step", self.players[0]
            );
            for (rank, i) in self.rating_order().into_iter().enumerate() {
                let (player, rating, step) = (&self.players[i], fmt_elo(self.ratings[i]), self.step_text(i));
                let _ = writeln!(s, "{:<4} {player:<20} {rating:>7} {step:>6}", rank + 1);
            }
        }
        if let Some((t, llr, status)) = self.sprt {
            let (lo, hi) = t.bounds();
            let verdict = match status {
                SprtStatus::AcceptH0 => "H0 accepted",
                SprtStatus::AcceptH1 => "H1 accepted",
                SprtStatus::Continue => "undecided",
            };
            let _ = writeln!(
                s,
                "\nSPRT elo0={} elo1={} alpha={} beta={}: LLR {llr:.2} (bounds {lo:.2}, {hi:.2}): {verdict}",
                t.elo0, t.elo1, t.alpha, t.beta
            );
        }
        s
    }

    fn markdown(&self, settings: &str, command_line: Option<&str>) -> String {
        let mut s = String::from("# koma arena report\n\n");
        if let Some(c) = command_line {
            let _ = writeln!(s, "```sh\n{c}\n```\n");
        }
        let _ = writeln!(s, "{settings}");
        let _ = writeln!(s, "## Results\n");
        let _ = writeln!(s, "Elo is the logistic Elo difference of the first player over the second, with the 95% interval of the score's normal approximation (trinomial variance); LOS is the likelihood of superiority.\n");
        let _ = writeln!(s, "| pair | games | W | D | L | score | Elo | 95% interval | LOS | reasons |");
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---|---:|---|");
        for p in &self.pairs {
            let reasons: Vec<String> = p.reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
            let columns = p.columns().join(" | ");
            let _ = writeln!(s, "| {} vs {} | {columns} | {} |", p.first, p.second, reasons.join(", "));
        }
        if !self.ratings.is_empty() {
            let _ = writeln!(s, "\n## Ratings\n\nMaximum likelihood (Bradley-Terry, a draw is half a win, one virtual draw per pair), `{}` = 0.\n", self.players[0]);
            let _ = writeln!(s, "| player | rating | step |\n|---|---:|---:|");
            for i in self.rating_order() {
                let _ = writeln!(s, "| {} | {} | {} |", self.players[i], fmt_elo(self.ratings[i]), self.step_text(i));
            }
        }
        if let Some((t, llr, status)) = self.sprt {
            let (lo, hi) = t.bounds();
            let _ = writeln!(
                s,
                "\n## SPRT\n\nelo0 = {}, elo1 = {}, alpha = {}, beta = {}: LLR {llr:.3} (bounds {lo:.3}, {hi:.3}): {status:?}",
                t.elo0, t.elo1, t.alpha, t.beta
            );
        }
        if let Some(p) = &self.plot {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let _ = writeln!(s, "\n## Elo against training step\n\n![Elo against training step]({name})");
        }
        let _ = writeln!(
            s,
            "\nGames: `games.jsonl` (one JSON object per game){}.",
            if self.pairs.is_empty() { "" } else { ", records in `kif/` and `games.csa` (standard shogi)" }
        );
        let _ = writeln!(s, "\n{}", self.summary());
        s
    }

    /// The one-line summary printed last.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for p in &self.pairs {
            let e = p.wdl.elo_error();
            let err = if e.is_finite() { format!(" ±{e:.0}") } else { String::new() };
            parts.push(format!(
                "{} vs {} {}-{}-{} {}{err}",
                p.first,
                p.second,
                p.wdl.wins,
                p.wdl.draws,
                p.wdl.losses,
                fmt_elo(p.wdl.elo())
            ));
        }
        let mut s = format!("arena: {} games in {:.0}s; {}", self.games, self.elapsed.as_secs_f64(), parts.join("; "));
        if let Some((_, llr, status)) = self.sprt {
            let _ = write!(s, "; sprt {status:?} (LLR {llr:.2})");
        }
        let _ = write!(s, "; report {}", self.out.join("report.md").display());
        s
    }
}
