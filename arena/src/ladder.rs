//! The ladder: reference players of known rating (`arena/ladder.toml`, the table of
//! `arena/README.md`), and the placement of a player on it from its results against some
//! of them.
//!
//! [`place`] is the maximum-likelihood rating against rungs of fixed Elo in the logistic
//! model (a draw counts as half a win and half a loss): the r where the expected score
//! over all games equals the score made. Its 95% interval is r ± 1.96 / sqrt(I(r)), with
//! I(r) the Fisher information of the games, `(ln 10 / 400)^2 Σ n p (1 - p)` (binomial:
//! slightly wide when there are many draws). A player that won (lost) every game has no
//! finite estimate; its bound is then exact: the rating at which such a sweep has a 2.5%
//! chance.

use std::path::{Path, PathBuf};

use rules::Variant;
use serde::Deserialize;

use crate::player::BadTimeControl;
use crate::spec::{BadPlayerSpec, PlayerSpec};
use crate::stats::{score_from_elo, Wdl, Z95};

const SHIPPED: &str = include_str!("../ladder.toml");
const SHIPPED_SHO: &str = include_str!("../ladder-sho.toml");
const SHIPPED_DAI: &str = include_str!("../ladder-dai.toml");

/// A reference player.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rung {
    pub name: String,
    /// An arena player SPEC (`random`, `usi:COMMAND,...`).
    pub spec: String,
    pub elo: f64,
}

/// The rungs, lowest first, the variant and the time control they were measured under.
#[derive(Clone, Debug, PartialEq)]
pub struct Ladder {
    pub variant: Variant,
    pub tc: String,
    pub rungs: Vec<Rung>,
}

/// Why a ladder table cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LadderError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// A ladder file's text is not a valid table.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: Box<LadderError> },
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    #[error(transparent)]
    Variant(#[from] rules::UnknownVariant),
    #[error("two rungs are named '{0}'")]
    SameName(String),
    #[error("rung {0}: the Elo must be a number")]
    BadElo(String),
    #[error(transparent)]
    Spec(#[from] BadPlayerSpec),
    #[error(transparent)]
    TimeControl(#[from] BadTimeControl),
}

/// Why `games.jsonl` files cannot be read for results.
#[derive(Debug, thiserror::Error)]
pub enum GamesFileError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: {why}", path.display())]
    BadLine { path: PathBuf, line: usize, why: BadGameLine },
}

/// What is wrong with one line of `games.jsonl`.
#[derive(Debug, thiserror::Error)]
pub enum BadGameLine {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("no '{0}'")]
    Missing(&'static str),
    #[error("winner '{0}'")]
    Winner(String),
}

/// The file's form of a [`Ladder`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LadderFile {
    variant: String,
    tc: String,
    #[serde(rename = "rung")]
    rungs: Vec<Rung>,
}

impl Ladder {
    /// The ladder shipped with koma (`arena/ladder.toml`, built in).
    pub fn shipped() -> Ladder {
        Ladder::from_toml(SHIPPED).expect("arena/ladder.toml is valid")
    }

    /// The shipped ladder of `variant` (`arena/ladder.toml`, `arena/ladder-sho.toml`,
    /// `arena/ladder-dai.toml`).
    pub fn shipped_for(variant: Variant) -> Ladder {
        let text = match variant {
            Variant::Shogi => SHIPPED,
            Variant::Sho => SHIPPED_SHO,
            Variant::Dai => SHIPPED_DAI,
        };
        Ladder::from_toml(text).expect("the shipped ladders are valid")
    }

    /// A ladder table file, or a variant's name (`shogi`, `sho`, `dai`) for its shipped
    /// ladder.
    pub fn load_or_shipped(name: &str) -> Result<Ladder, LadderError> {
        match name.parse::<Variant>() {
            Ok(v) if !Path::new(name).exists() => Ok(Ladder::shipped_for(v)),
            _ => Ladder::load(Path::new(name)),
        }
    }

    pub fn from_toml(text: &str) -> Result<Ladder, LadderError> {
        let file: LadderFile = toml::from_str(text)?;
        let variant = file.variant.parse::<Variant>()?;
        let ladder = Ladder { variant, tc: file.tc, rungs: file.rungs };
        for (i, r) in ladder.rungs.iter().enumerate() {
            if ladder.rungs[..i].iter().any(|q| q.name == r.name) {
                return Err(LadderError::SameName(r.name.clone()));
            }
            if !r.elo.is_finite() {
                return Err(LadderError::BadElo(r.name.clone()));
            }
            ladder.player_spec(r)?;
        }
        ladder.tc.parse::<crate::TimeControl>()?;
        Ok(ladder)
    }

    pub fn load(path: &Path) -> Result<Ladder, LadderError> {
        let text = std::fs::read_to_string(path).map_err(|source| LadderError::Read { path: path.into(), source })?;
        Ladder::from_toml(&text).map_err(|e| LadderError::File { path: path.into(), source: Box::new(e) })
    }

    pub fn rung(&self, name: &str) -> Option<&Rung> {
        self.rungs.iter().find(|r| r.name == name)
    }

    /// The rung as a player of a match (named after the rung).
    pub fn player_spec(&self, rung: &Rung) -> Result<PlayerSpec, BadPlayerSpec> {
        format!("{}={}", rung.name, rung.spec).parse::<PlayerSpec>()
    }
}

/// The rating of the shipped ladder's rung named `name`.
pub fn rung_rating(name: &str) -> Option<f64> {
    shipped_ladder().rung(name).map(|r| r.elo)
}

/// The shipped ladder, read once.
fn shipped_ladder() -> &'static Ladder {
    static LADDER: std::sync::OnceLock<Ladder> = std::sync::OnceLock::new();
    LADDER.get_or_init(Ladder::shipped)
}

/// A player's rating on the ladder with its 95% interval (bounds may be infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    pub elo: f64,
    pub low: f64,
    pub high: f64,
    pub games: u32,
}

impl Placement {
    /// A rating from one rung: the rung's Elo plus the Elo difference of the results and
    /// its interval (`Wdl::elo`, `Wdl::elo_interval`).
    pub fn against(rung_elo: f64, wdl: &Wdl) -> Placement {
        let (lo, hi) = wdl.elo_interval();
        Placement { elo: rung_elo + wdl.elo(), low: rung_elo + lo, high: rung_elo + hi, games: wdl.games() }
    }
}

/// Expected score of a player rated `r` against each rung, weighted by games.
fn expected(results: &[(f64, Wdl)], r: f64) -> f64 {
    results.iter().map(|(e, w)| w.games() as f64 * score_from_elo(r - e)).sum()
}

/// The r in `[-20000, 20000]` where the increasing `f(r)` crosses `target` (bisection).
fn solve(f: impl Fn(f64) -> f64, target: f64) -> f64 {
    let (mut lo, mut hi) = (-20_000.0f64, 20_000.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The maximum-likelihood placement from results against rungs `(rung Elo, W/D/L)`; `None`
/// without games. See the module docs.
pub fn place(results: &[(f64, Wdl)]) -> Option<Placement> {
    let games: u32 = results.iter().map(|(_, w)| w.games()).sum();
    if games == 0 {
        return None;
    }
    let n = games as f64;
    let score: f64 = results.iter().map(|(_, w)| w.wins as f64 + 0.5 * w.draws as f64).sum();
    // Log-probability of winning (losing) every game: increasing (decreasing) in r.
    let log_sweep = |r: f64, win: bool| -> f64 {
        results
            .iter()
            .map(|(e, w)| {
                let p = score_from_elo(r - e);
                w.games() as f64 * if win { p } else { 1.0 - p }.max(1e-300).ln()
            })
            .sum()
    };
    let tail = (0.5 * (1.0 - 0.95f64)).ln();
    if score >= n {
        let low = solve(|r| log_sweep(r, true), tail);
        return Some(Placement { elo: f64::INFINITY, low, high: f64::INFINITY, games });
    }
    if score <= 0.0 {
        let high = solve(|r| -log_sweep(r, false), -tail);
        return Some(Placement { elo: f64::NEG_INFINITY, low: f64::NEG_INFINITY, high, games });
    }
    let elo = solve(|r| expected(results, r), score);
    let c = std::f64::consts::LN_10 / 400.0;
    let info: f64 = results
        .iter()
        .map(|(e, w)| {
            let p = score_from_elo(elo - e);
            w.games() as f64 * p * (1.0 - p)
        })
        .sum::<f64>()
        * c
        * c;
    let half = Z95 / info.sqrt();
    Some(Placement { elo, low: elo - half, high: elo + half, games })
}

/// The rating of [`place`] with the score clamped to `[1/2, N - 1/2]` of N games (as
/// `Wdl::finite_elo`): finite for sweeps, for plots. `None` without games.
pub fn finite_rating(results: &[(f64, Wdl)]) -> Option<f64> {
    let games: u32 = results.iter().map(|(_, w)| w.games()).sum();
    if games == 0 {
        return None;
    }
    let score: f64 = results.iter().map(|(_, w)| w.wins as f64 + 0.5 * w.draws as f64).sum();
    Some(solve(|r| expected(results, r), score.clamp(0.5, games as f64 - 0.5)))
}

/// A player's results against each opponent in `games.jsonl` files of `koma arena`, from
/// that player's side, opponents in order of first appearance.
pub fn results_from_games(paths: &[&Path], player: &str) -> Result<Vec<(String, Wdl)>, GamesFileError> {
    let mut out: Vec<(String, Wdl)> = Vec::new();
    for_each_game(paths, |sente, gote, winner| {
        let (side, opponent) = match (sente == player, gote == player) {
            (true, false) => (rules::Color::Sente, gote),
            (false, true) => (rules::Color::Gote, sente),
            _ => return,
        };
        let at = match out.iter().position(|(o, _)| o == opponent) {
            Some(k) => k,
            None => {
                out.push((opponent.to_string(), Wdl::default()));
                out.len() - 1
            }
        };
        out[at].1.count(winner, side);
    })?;
    Ok(out)
}

/// Every pair's results in `games.jsonl` files of `koma arena`: the players in order of
/// first appearance, and `results[i][j]`, player i's record against player j (the form
/// [`crate::stats::ratings`] takes), so that matches played apart can be rated together.
pub fn pair_results_from_games(paths: &[&Path]) -> Result<(Vec<String>, Vec<Vec<Wdl>>), GamesFileError> {
    let mut names: Vec<String> = Vec::new();
    let mut results: Vec<Vec<Wdl>> = Vec::new();
    for_each_game(paths, |sente, gote, winner| {
        let (s, g) = (player_index(&mut names, &mut results, sente), player_index(&mut names, &mut results, gote));
        results[s][g].count(winner, rules::Color::Sente);
        results[g][s].count(winner, rules::Color::Gote);
    })?;
    Ok((names, results))
}

/// Adds A's record `w` against B (and B's against A) to a table of
/// [`pair_results_from_games`]: a published result whose games are not at hand.
pub fn add_pair_record(names: &mut Vec<String>, results: &mut Vec<Vec<Wdl>>, a: &str, b: &str, w: Wdl) {
    let (i, j) = (player_index(names, results, a), player_index(names, results, b));
    results[i][j].add(w);
    results[j][i].add(w.flipped());
}

/// The player's row in the pair table, a new row and column when it is not there yet.
fn player_index(names: &mut Vec<String>, results: &mut Vec<Vec<Wdl>>, name: &str) -> usize {
    if let Some(i) = names.iter().position(|n| n == name) {
        return i;
    }
    names.push(name.to_string());
    results.iter_mut().for_each(|row| row.push(Wdl::default()));
    results.push(vec![Wdl::default(); names.len()]);
    names.len() - 1
}

/// Calls `f` with (sente, gote, winner) of every game in `games.jsonl` files, in order;
/// the first unreadable file or malformed line is the error.
fn for_each_game(paths: &[&Path], mut f: impl FnMut(&str, &str, Option<rules::Color>)) -> Result<(), GamesFileError> {
    for path in paths {
        let text =
            std::fs::read_to_string(path).map_err(|source| GamesFileError::Read { path: path.into(), source })?;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let bad = |why: BadGameLine| GamesFileError::BadLine { path: path.into(), line: i + 1, why };
            let row: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(e.into()))?;
            let field = |k: &'static str| row[k].as_str().ok_or(BadGameLine::Missing(k)).map_err(bad);
            let (sente, gote, winner) = (field("sente")?, field("gote")?, field("winner")?);
            let winner =
                crate::report::winner_of_word(winner).ok_or_else(|| bad(BadGameLine::Winner(winner.to_string())))?;
            f(sente, gote, winner);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::elo_from_score;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn the_shipped_ladder_is_the_readme_table() {
        let l = Ladder::shipped();
        let names: Vec<&str> = l.rungs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "random",
                "greedy20",
                "greedy50",
                "greedy",
                "material2r20",
                "material2",
                "material3",
                "fsf1s0",
                "fsf1",
                "gnushogi1",
                "fsf3",
                "fsf5",
                "gnushogi3",
                "fsfn1000",
                "fsfn1400",
                "fsfn2000",
                "fsfn2800",
                "fsfn4000",
                "fsfn5600",
                "fsfn8000",
                "fsfn11000",
                "fsfn16000",
                "fsfn22000",
                "fsfn32000",
                "fsfn45000",
                "fsfn64000",
                "fsfn90000",
                "fsfn128000",
                "fsfn512000",
                "gps4",
                "fsfn1024000",
                "gps5"
            ]
        );
        assert_eq!(l.rung("greedy").unwrap().elo, 2168.0);
        assert_eq!(l.rung("fsf1").unwrap().elo, 4269.0);
        let material2 = l.player_spec(l.rung("material2").unwrap()).unwrap();
        assert_eq!(material2.kind, crate::SpecKind::Material { depth: 2, random_share: 0.0 });
        assert!(l.rungs.windows(2).all(|w| w[0].elo <= w[1].elo));
        let fsf1 = l.player_spec(l.rung("fsf1").unwrap()).unwrap();
        assert_eq!(fsf1.limit, Some(crate::TimeControl::Depth(1)));
        let node_rung = l.player_spec(l.rung("fsfn8000").unwrap()).unwrap();
        assert_eq!(node_rung.limit, Some(crate::TimeControl::Nodes(8000)));
        // From fsf5 up the rungs are close enough to place a network between any two.
        let fsf5 = l.rungs.iter().position(|r| r.name == "fsf5").unwrap();
        for w in l.rungs[fsf5..].windows(2) {
            assert!(w[1].elo - w[0].elo <= 250.0, "{} -> {}: a step over 250", w[0].name, w[1].name);
        }
        assert!(Ladder::from_toml("tc = \"nodes=1\"\n[[rung]]\nname = \"a\"\nspec = \"foo\"\nelo = 1\n").is_err());
        assert!(
            Ladder::from_toml("tc = \"nodes=1\"\n[[rung]]\nname = \"a\"\nspec = \"random\"\nelo = 1\nx = 2\n").is_err()
        );
    }

    #[test]
    fn the_sho_and_dai_ladders_are_the_readme_tables() {
        let sho = Ladder::load_or_shipped("sho").unwrap();
        assert_eq!(sho, Ladder::shipped_for(Variant::Sho));
        assert_eq!(sho.variant, Variant::Sho);
        let dai = Ladder::shipped_for(Variant::Dai);
        assert_eq!(dai.variant, Variant::Dai);
        let names: Vec<&str> = dai.rungs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["random", "greedy20", "greedy50", "greedy", "material2", "hachu1", "hachu2"]);
        for l in [&sho, &dai] {
            assert!(l.rungs.len() >= 4, "three rungs above random");
            assert!(l.rungs.windows(2).all(|w| w[0].elo < w[1].elo));
        }
        assert_eq!(Ladder::shipped_for(Variant::Shogi), Ladder::shipped());
        assert!(Ladder::load_or_shipped("no-such-ladder.toml").is_err());
    }

    #[test]
    fn one_rung_gives_the_rung_plus_the_elo_difference() {
        // 60-20-20 against a rung at 1000: score 0.7, +147.19.
        let w = Wdl::new(60, 20, 20);
        let p = place(&[(1000.0, w)]).unwrap();
        assert!(close(p.elo, 1000.0 + elo_from_score(0.7), 1e-6), "{p:?}");
        // Fisher information: 100 * 0.7 * 0.3 * (ln 10 / 400)^2 -> half-width 1.96 / sqrt(I).
        let c = std::f64::consts::LN_10 / 400.0;
        let half = Z95 / (100.0 * 0.21 * c * c).sqrt();
        assert!(close(p.high - p.elo, half, 1e-6) && close(p.elo - p.low, half, 1e-6), "{p:?}");
        assert!(close(half, 74.30, 0.01), "{half}");
        let a = Placement::against(1000.0, &w);
        assert!(close(a.elo, p.elo, 1e-6));
        assert_eq!(p.games, 100);
    }

    #[test]
    fn an_even_score_places_a_player_on_the_rung() {
        let p = place(&[(645.0, Wdl::new(10, 0, 10))]).unwrap();
        assert!(close(p.elo, 645.0, 1e-6), "{p:?}");
        assert!(p.high - p.elo > 100.0 && p.high - p.elo < 400.0, "{p:?}");
        assert_eq!(rung_rating("greedy"), Some(2168.0));
        assert_eq!(rung_rating("previous"), None);
    }

    #[test]
    fn two_rungs_combine_between_them() {
        // Even against a rung at 0 and at 400 in equal numbers: the ML rating is 200
        // (by symmetry), whatever the split of the score between the two.
        let p = place(&[(0.0, Wdl::new(15, 0, 5)), (400.0, Wdl::new(5, 0, 15))]).unwrap();
        assert!(close(p.elo, 200.0, 1e-6), "{p:?}");
        let q = place(&[(0.0, Wdl::new(16, 0, 4)), (400.0, Wdl::new(4, 0, 16))]).unwrap();
        assert!(close(q.elo, 200.0, 1e-6), "{q:?}");
        // A sweep of one rung and a split against the next: finite, above the split's
        // single-rung estimate.
        let r = place(&[(645.0, Wdl::new(20, 0, 0)), (1290.0, Wdl::new(5, 0, 15))]).unwrap();
        assert!(r.elo.is_finite() && r.elo > 645.0 && r.elo < 1290.0, "{r:?}");
        assert!(r.elo > 1290.0 + Wdl::new(5, 0, 15).elo());
        assert!(place(&[]).is_none());
    }

    #[test]
    fn sweeps_have_exact_one_sided_bounds() {
        // 10 wins out of 10 against a rung at 500: p^10 = 0.025 -> p = 0.6915 -> +140.2.
        let p = place(&[(500.0, Wdl::new(10, 0, 0))]).unwrap();
        assert_eq!(p.elo, f64::INFINITY);
        assert_eq!(p.high, f64::INFINITY);
        let expect = 500.0 + elo_from_score(0.025f64.powf(0.1));
        assert!(close(p.low, expect, 1e-6), "{p:?}");
        assert!(close(p.low, 640.2, 0.05), "{p:?}");
        // The finite rating of a sweep: the rung plus `finite_elo`.
        let finite = finite_rating(&[(500.0, Wdl::new(10, 0, 0))]).unwrap();
        assert!(close(finite, 500.0 + Wdl::new(10, 0, 0).finite_elo(), 1e-6), "{finite}");
        let split = [(0.0, Wdl::new(15, 0, 5)), (400.0, Wdl::new(5, 0, 15))];
        assert!(close(finite_rating(&split).unwrap(), 200.0, 1e-6));
        let q = place(&[(500.0, Wdl::new(0, 0, 10))]).unwrap();
        assert_eq!(q.elo, f64::NEG_INFINITY);
        assert!(close(q.high, 1000.0 - expect, 1e-6), "{q:?}");
    }

    #[test]
    fn results_are_read_from_games_jsonl() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("games.jsonl");
        let rows = [
            r#"{"sente":"net","gote":"greedy","winner":"sente"}"#,
            r#"{"sente":"greedy","gote":"net","winner":"sente"}"#,
            r#"{"sente":"fsf1","gote":"net","winner":"draw"}"#,
            r#"{"sente":"fsf1","gote":"greedy","winner":"gote"}"#,
        ];
        std::fs::write(&p, rows.join("\n")).unwrap();
        let r = results_from_games(&[p.as_path()], "net").unwrap();
        assert_eq!(r, vec![("greedy".to_string(), Wdl::new(1, 0, 1)), ("fsf1".to_string(), Wdl::new(0, 1, 0))]);
        // Every pair, from both sides, across two files.
        let q = dir.path().join("more.jsonl");
        std::fs::write(&q, r#"{"sente":"greedy","gote":"fsf1","winner":"draw"}"#).unwrap();
        let (names, m) = pair_results_from_games(&[p.as_path(), q.as_path()]).unwrap();
        assert_eq!(names, ["net", "greedy", "fsf1"]);
        assert_eq!((m[0][1], m[1][0]), (Wdl::new(1, 0, 1), Wdl::new(1, 0, 1)));
        assert_eq!((m[0][2], m[2][0]), (Wdl::new(0, 1, 0), Wdl::new(0, 1, 0)));
        assert_eq!((m[2][1], m[1][2]), (Wdl::new(0, 1, 1), Wdl::new(1, 1, 0)));
        assert_eq!(m[0][0], Wdl::default());
        std::fs::write(&q, "{\"sente\":\"a\",\"gote\":\"b\"}\n").unwrap();
        let err = pair_results_from_games(&[q.as_path()]).unwrap_err().to_string();
        assert!(err.contains("more.jsonl:1") && err.contains("winner"), "{err}");
    }
}
