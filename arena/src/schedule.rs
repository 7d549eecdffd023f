//! The match harness below [`run_match`](crate::run_match): games of pairs of players on
//! worker threads, K at once, each worker keeping the players of its current pair (engine
//! processes, searches) between games; a player that fails is replaced by a fresh one.
//! `koma arena` and a network's match ([`crate::network_match`], the evaluation games of
//! `koma train` and `koma evaluate`) both play through [`play_jobs`]; a network's match
//! through [`play_pair`], which also counts the result.
//!
//! Games run on plain threads rather than rayon's pool: a game's thread mostly waits (for
//! an engine process, or for the batching service that merges the network leaves of all
//! games into one forward pass), and a waiting rayon worker would idle a core.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use rules::{Color, EndCause, EndRules};

use crate::game::{play_game_until, GameRecord, GameSettings};
use crate::player::{Player, TimeControl};
use crate::spec::PlayerStartError;
use crate::stats::Wdl;
use dataio::Opening;

/// One scheduled game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// 1-based, in scheduling order.
    pub number: usize,
    /// Index into the pairs.
    pub pair: usize,
    /// Index into the openings.
    pub opening: usize,
    /// The pair's first player plays sente.
    pub first_sente: bool,
}

/// `games` games of each of `pairs` pairs, pair by pair: game g of a pair plays opening
/// `(g / 2 + offset) % openings` with the colours swapped on odd g.
pub fn jobs(pairs: usize, games: usize, openings: usize, offset: usize) -> Vec<Job> {
    let mut out = Vec::with_capacity(pairs * games);
    for pair in 0..pairs {
        for g in 0..games {
            let opening = (g / 2 + offset) % openings.max(1);
            out.push(Job { number: out.len() + 1, pair, opening, first_sente: g % 2 == 0 });
        }
    }
    out
}

/// The players of a match, by index.
pub trait Roster: Sync {
    /// A fresh player `index`; `seed` differs for every player made.
    fn create(&self, index: usize, seed: u64) -> Result<Box<dyn Player>, PlayerStartError>;
    /// The limit player `index` moves under (its own fixed one or the match's).
    fn limit(&self, index: usize) -> TimeControl;
}

/// How the games of a schedule are played.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    pub tc: TimeControl,
    pub end_rules: EndRules,
    /// Grace over a clock before a late answer loses on time.
    pub time_margin: Duration,
    /// How long a player without a clock may think before it loses as hung.
    pub hang_timeout: Duration,
}

/// What [`play_jobs`] plays.
pub struct Schedule<'a> {
    pub pairs: &'a [(usize, usize)],
    pub jobs: &'a [Job],
    pub openings: &'a [Opening],
    pub rules: Rules,
    /// Games at once.
    pub concurrency: usize,
    pub seed: u64,
    /// Once set (a signal), no game starts and the games being played end before their
    /// next move as `stopped` (no result).
    pub stop: Option<&'a AtomicBool>,
}

impl Schedule<'_> {
    fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::SeqCst))
    }
}

/// Plays the jobs. `on_game` receives every finished game (with the player indices of
/// sente and gote) in the order they finish and answers whether the game's pair is
/// decided (its games not yet started are skipped); its error stops the schedule.
pub fn play_jobs<E: Send>(
    s: &Schedule<'_>,
    roster: &dyn Roster,
    mut on_game: impl FnMut(&Job, &GameRecord, [usize; 2]) -> Result<bool, E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let stop: Vec<AtomicBool> = s.pairs.iter().map(|_| AtomicBool::new(false)).collect();
    let concurrency = s.concurrency.clamp(1, s.jobs.len().max(1));
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(Job, GameRecord, [usize; 2])>();
        for w in 0..concurrency {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || {
                let mut worker = Worker { s, roster, cache: HashMap::new(), made: 0, id: w as u64 };
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&job) = s.jobs.get(k) else { break };
                    if s.stopped() {
                        break;
                    }
                    if stop[job.pair].load(Ordering::SeqCst) {
                        continue;
                    }
                    let (record, seats) = worker.play(&job);
                    if tx.send((job, record, seats)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (job, record, seats) in rx {
            match on_game(&job, &record, seats) {
                Ok(decided) => {
                    if decided {
                        stop[job.pair].store(true, Ordering::SeqCst);
                    }
                }
                Err(e) => {
                    // No new games; the workers finish the ones they are playing.
                    next.store(s.jobs.len(), Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        Ok(())
    })
}

/// A worker thread's players, kept between the games of a pair.
struct Worker<'a> {
    s: &'a Schedule<'a>,
    roster: &'a dyn Roster,
    cache: HashMap<usize, Box<dyn Player>>,
    made: u64,
    id: u64,
}

impl Worker<'_> {
    fn play(&mut self, job: &Job) -> (GameRecord, [usize; 2]) {
        let (a, b) = self.s.pairs[job.pair];
        let seats = if job.first_sente { [a, b] } else { [b, a] };
        self.cache.retain(|&i, _| i == a || i == b);
        (self.play_seated(job, seats), seats)
    }

    fn play_seated(&mut self, job: &Job, seats: [usize; 2]) -> GameRecord {
        let opening = &self.s.openings[job.opening];
        // Create missing players; one that cannot start loses the game as a crash.
        for (c, &pi) in seats.iter().enumerate() {
            if self.cache.contains_key(&pi) {
                continue;
            }
            self.made += 1;
            let seed = self.s.seed ^ (self.id << 48) ^ (self.made << 24) ^ job.number as u64;
            match self.roster.create(pi, seed) {
                Ok(p) => {
                    self.cache.insert(pi, p);
                }
                Err(why) => {
                    let side = if c == 0 { Color::Sente } else { Color::Gote };
                    return GameRecord::fault_before_start(opening, side, EndCause::Crash, why.to_string());
                }
            }
        }
        let r = &self.s.rules;
        let settings = GameSettings {
            tc: r.tc,
            limits: [self.roster.limit(seats[0]), self.roster.limit(seats[1])],
            end_rules: r.end_rules,
            time_margin: r.time_margin,
            hang_timeout: r.hang_timeout,
        };
        let mut sente = self.cache.remove(&seats[0]).expect("created above");
        let mut gote = self.cache.remove(&seats[1]).expect("created above");
        let never = AtomicBool::new(false);
        let stop = self.s.stop.unwrap_or(&never);
        let record = play_game_until([sente.as_mut(), gote.as_mut()], opening, &settings, stop);
        // A player that failed is replaced by a fresh one (its process killed on drop).
        if record.faulty != Some(Color::Sente) {
            self.cache.insert(seats[0], sente);
        }
        if record.faulty != Some(Color::Gote) {
            self.cache.insert(seats[1], gote);
        }
        record
    }
}

/// The result of [`play_pair`], from the first player's side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairOutcome {
    pub wdl: Wdl,
    /// Plies of all games, openings included.
    pub plies: u64,
    /// Games lost by a fault of the first or the second player (crash, hang, illegal
    /// move, time, ...).
    pub faults: [u32; 2],
}

impl PairOutcome {
    /// Mean game length in plies.
    pub fn mean_plies(&self) -> f64 {
        self.plies as f64 / self.wdl.games().max(1) as f64
    }
}

/// How [`play_pair`] plays.
pub struct PairPlan<'a> {
    pub games: usize,
    /// Each opening is played twice, colours swapped, starting at opening `seed % len`.
    pub openings: &'a [Opening],
    pub rules: Rules,
    /// Games at once.
    pub concurrency: usize,
    pub seed: u64,
    /// See [`Schedule::stop`]; stopped games are not counted.
    pub stop: Option<&'a AtomicBool>,
}

/// Plays the games of `plan` between players 0 and 1 of `roster` and counts them;
/// `observe` sees the count after every finished game.
pub fn play_pair(roster: &dyn Roster, plan: &PairPlan<'_>, observe: &mut dyn FnMut(&PairOutcome)) -> PairOutcome {
    let pairs = [(0, 1)];
    let jobs = jobs(1, plan.games, plan.openings.len(), plan.seed as usize);
    let schedule = Schedule {
        pairs: &pairs,
        jobs: &jobs,
        openings: plan.openings,
        rules: plan.rules,
        concurrency: plan.concurrency,
        seed: plan.seed,
        stop: plan.stop,
    };
    let mut out = PairOutcome::default();
    let counted = play_jobs(&schedule, roster, |_, record, seats| {
        if record.stopped() {
            return Ok(false);
        }
        let first = if seats[0] == 0 { Color::Sente } else { Color::Gote };
        out.wdl.count(record.winner, first);
        out.plies += record.moves.len() as u64;
        if let Some(side) = record.faulty {
            out.faults[usize::from(side != first)] += 1;
        }
        observe(&out);
        Ok::<bool, std::convert::Infallible>(false)
    });
    match counted {
        Ok(()) => out,
        Err(e) => match e {},
    }
}
