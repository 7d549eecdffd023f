//! A network's match against one opponent at a fixed number of simulations a move, played
//! through the match harness ([`play_pair`]): the evaluation games of `koma train` and
//! `koma evaluate`. The network searches as the arena's koma player does (a fixed number
//! of simulations per move, leaves evaluated in batches with virtual loss, no noise)
//! against a player of the arena (a built-in player, an engine of the ladder) or another
//! network. All games of a match run at once on threads, and every network's leaves from
//! all games go through one batching service ([`nn::Batcher`]), so a forward pass holds
//! the leaves of many games; a network whose forward passes run side by side (the
//! portable backend) is evaluated in each game's thread instead. Games are adjudicated by the rules with a maximum length; a
//! draw counts half.
//!
//! Opponents given as text (`eval.opponents` of a training config, `koma evaluate
//! --opponent`) are read by [`parse_player`]: `random`, `greedy`, a rung of a ladder
//! (`fsf1`), or an arena player `NAME=SPEC`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use nn::BatcherStats;
use rules::{EndRules, Position, Variant};
use search::{Rng, SearchConfig};

use crate::koma_player::{KomaConfig, KomaNetwork, KomaPlayer};
use crate::ladder::Ladder;
use crate::player::{Player, TimeControl};
use crate::schedule::{play_pair, PairOutcome, PairPlan, Roster, Rules};
use crate::{BadPlayerSpec, Opening, PlayerSpec, PlayerStartError, SpecKind};

/// Who the network plays.
pub enum Opponent {
    /// A player of the arena: `random`, `greedy`, an engine.
    Player(PlayerSpec),
    /// Another network (an earlier checkpoint), searching like ours.
    Network(KomaNetwork),
}

/// How a match of a network against an opponent is played.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    pub games: usize,
    /// Simulations per network move (1 = the raw policy's favourite).
    pub simulations: u32,
    /// Leaves per network evaluation of one game's search (virtual loss between them).
    pub batch_size: usize,
    /// Games at once; 0 = all of them, at most [`MAX_CONCURRENCY`].
    pub concurrency: usize,
    pub max_plies: u32,
    pub search: SearchConfig,
    /// Each opening is played twice, colours swapped.
    pub openings: Vec<Opening>,
    pub seed: u64,
    /// Working directory of engine processes.
    pub workdir: PathBuf,
    /// When set (a signal), the match stops within a move, returning the games finished
    /// so far.
    pub stop: Option<Arc<AtomicBool>>,
}

/// Why an opponent's text names no player.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OpponentError {
    /// A rung of the ladder whose player does not parse.
    #[error("rung {rung}: {source}")]
    Rung { rung: String, source: BadPlayerSpec },
    #[error("{text}: {source}")]
    BadSpec { text: String, source: BadPlayerSpec },
    #[error("{text}: a network opponent is `previous` (or a checkpoint for `koma evaluate`)")]
    Network { text: String },
    #[error("unknown opponent '{text}' (expected previous, a rung of the ladder: {}, or NAME=SPEC)", rungs.join(", "))]
    Unknown { text: String, rungs: Vec<String> },
}

/// A player opponent given as text: `random`, `greedy`, a rung of `ladder` (`fsf1`) or an
/// arena player `NAME=SPEC`. Returns the player (named) and its ladder Elo when it is a
/// rung.
pub fn parse_player(text: &str, ladder: &Ladder) -> Result<(PlayerSpec, Option<f64>), OpponentError> {
    if let Some(rung) = ladder.rung(text) {
        let spec = ladder.player_spec(rung).map_err(|source| OpponentError::Rung { rung: text.into(), source })?;
        return Ok((spec, Some(rung.elo)));
    }
    if text.contains('=') {
        let spec = text.parse::<PlayerSpec>().map_err(|source| OpponentError::BadSpec { text: text.into(), source })?;
        if matches!(spec.kind, SpecKind::Koma { .. }) {
            return Err(OpponentError::Network { text: text.into() });
        }
        return Ok((spec, None));
    }
    let rungs = ladder.rungs.iter().map(|r| r.name.clone()).collect();
    Err(OpponentError::Unknown { text: text.into(), rungs })
}

/// `pairs` openings of `plies` uniformly random plies from the start position (each
/// redrawn when the random moves end the game).
pub fn random_openings(variant: Variant, pairs: usize, plies: u32, seed: u64) -> Vec<Opening> {
    let mut rng = Rng::new(seed);
    let rules = EndRules::default();
    let ended = |p: &Position| p.outcome(&rules).is_some() || p.can_declare();
    (0..pairs.max(1))
        .map(|_| {
            let mut moves = Vec::new();
            for _ in 0..20 {
                let mut pos = Position::startpos(variant);
                moves.clear();
                for _ in 0..plies {
                    let legal = pos.legal_moves();
                    if legal.is_empty() || ended(&pos) {
                        break;
                    }
                    let mv = legal[rng.below(legal.len())];
                    pos.play(mv);
                    moves.push(mv);
                }
                if !ended(&pos) {
                    break;
                }
            }
            let text = std::iter::once("startpos moves".to_string()).chain(moves.iter().map(|m| m.to_usi()));
            Opening { text: text.collect::<Vec<_>>().join(" "), base: Position::startpos(variant), moves }
        })
        .collect()
}

/// One side of a network's match.
enum Seat {
    Koma(KomaNetwork),
    Spec(PlayerSpec),
}

/// The two players of a network's match: 0 is ours.
struct NetworkRoster<'a> {
    variant: Variant,
    seats: [Seat; 2],
    config: KomaConfig,
    nodes: TimeControl,
    workdir: &'a Path,
}

impl Roster for NetworkRoster<'_> {
    fn create(&self, index: usize, seed: u64) -> Result<Box<dyn Player>, PlayerStartError> {
        match &self.seats[index] {
            Seat::Koma(net) => Ok(Box::new(KomaPlayer::new(net.clone(), self.config.clone(), self.variant)?)),
            Seat::Spec(spec) => spec.create(self.variant, seed, self.workdir, ENGINE_TIMEOUT),
        }
    }

    fn limit(&self, index: usize) -> TimeControl {
        match &self.seats[index] {
            Seat::Koma(_) => self.nodes,
            Seat::Spec(spec) => spec.effective_limit(self.nodes),
        }
    }
}

/// The result of [`play_match`].
#[derive(Clone, Debug, Default)]
pub struct MatchOutcome {
    /// From our side.
    pub pair: PairOutcome,
    /// Our network's batching service: forward passes and positions evaluated.
    pub batches: BatcherStats,
}

/// How long an engine may take to start (its handshake) or to answer a move.
pub const ENGINE_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a batching service gathers the leaves of the games for one forward pass.
/// All games run at once, so waiting pays: 20 games at 128 simulations, batch 8, on 2
/// cores, made 102 positions per pass with 1 ms against 69 with none, and took 23.4 s
/// of CPU instead of 25.3.
const BATCH_WAIT: Duration = Duration::from_millis(1);

/// Games at once when the settings say "all": each is a thread with a search tree, and
/// 64 games of 8 leaves fill forward passes of 512 positions.
pub const MAX_CONCURRENCY: usize = 64;

/// Plays `s.games` games of `ours` against `opponent`.
pub fn play_match(variant: Variant, ours: &KomaNetwork, opponent: &Opponent, s: &MatchSettings) -> MatchOutcome {
    play_match_observed(variant, ours, opponent, s, &mut |_| {})
}

/// [`play_match`] that shows `observe` the result after every finished game.
pub fn play_match_observed(
    variant: Variant,
    ours: &KomaNetwork,
    opponent: &Opponent,
    s: &MatchSettings,
    observe: &mut dyn FnMut(&PairOutcome),
) -> MatchOutcome {
    let concurrency = if s.concurrency == 0 { s.games.min(MAX_CONCURRENCY) } else { s.concurrency }.max(1);
    let max_batch = concurrency * s.batch_size.max(1);
    // One batching service per network, shared by the games (dropped after the match);
    // none where the network's passes run side by side (the portable backend): each game's
    // search then evaluates in its own thread, on every core.
    let serve = |net: &KomaNetwork, name: &str| {
        if net.network.evaluator.runs_in_parallel() {
            (None, net.clone())
        } else {
            net.batched(max_batch, BATCH_WAIT, name)
        }
    };
    let (ours_service, ours) = serve(ours, "koma-eval");
    let (theirs_service, theirs) = match opponent {
        Opponent::Network(net) => {
            let (service, net) = serve(net, "koma-eval-opponent");
            (service, Seat::Koma(net))
        }
        Opponent::Player(spec) => (None, Seat::Spec(spec.clone())),
    };
    let roster = NetworkRoster {
        variant,
        seats: [Seat::Koma(ours), theirs],
        // A network loaded from a file that records its leaf material setting (a checkpoint
        // of `koma evaluate`, an opponent's) plays with it; one in memory (the learner's)
        // with the run's search as it is (`KomaConfig::from_network`).
        config: KomaConfig { search: s.search.clone(), batch_size: s.batch_size.max(1), ..KomaConfig::default() },
        nodes: TimeControl::Nodes(s.simulations.max(1) as u64),
        workdir: &s.workdir,
    };
    let rules = Rules {
        tc: roster.nodes,
        end_rules: EndRules { max_plies: Some(s.max_plies), ..EndRules::default() },
        time_margin: Duration::from_secs(1),
        hang_timeout: ENGINE_TIMEOUT,
    };
    let plan =
        PairPlan { games: s.games, openings: &s.openings, rules, concurrency, seed: s.seed, stop: s.stop.as_deref() };
    let pair = play_pair(&roster, &plan, observe);
    drop(theirs_service);
    let batches = ours_service.map(|b| b.shutdown()).unwrap_or_default();
    MatchOutcome { pair, batches }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(games: usize, simulations: u32, batch_size: usize) -> MatchSettings {
        MatchSettings {
            games,
            simulations,
            batch_size,
            concurrency: 0,
            max_plies: 60,
            search: SearchConfig::default(),
            openings: random_openings(Variant::Shogi, games.div_ceil(2), 2, 3),
            seed: 3,
            workdir: std::env::temp_dir(),
            stop: None,
        }
    }

    fn uniform() -> KomaNetwork {
        KomaNetwork::from_network(nn::Network::uniform(Variant::Shogi))
    }

    #[test]
    fn random_openings_are_playable_and_distinct() {
        let o = random_openings(Variant::Shogi, 5, 4, 1);
        assert_eq!(o.len(), 5);
        for op in &o {
            assert_eq!(op.moves.len(), 4);
            assert!(op.position().outcome(&EndRules::default()).is_none());
            let again = Opening::parse(Variant::Shogi, &op.text).unwrap();
            assert_eq!(again.moves, op.moves);
        }
        assert!(o.windows(2).any(|w| w[0].moves != w[1].moves));
    }

    #[test]
    fn uniform_search_plays_full_games_against_players_and_networks() {
        let s = settings(4, 8, 4);
        let m = play_match(Variant::Shogi, &uniform(), &Opponent::Player("random=random".parse().unwrap()), &s);
        // Four games at once, up to 4 leaves each: forward passes of more than one leaf.
        assert!(m.batches.mean_batch() > 1.0, "{:?}", m.batches);
        let r = m.pair;
        assert_eq!(r.wdl.games(), 4);
        assert_eq!(r.faults, [0, 0]);
        assert!(r.mean_plies() > 2.0);
        let r = play_match(Variant::Shogi, &uniform(), &Opponent::Network(uniform()), &s).pair;
        assert_eq!(r.wdl.games(), 4);
    }

    /// A tiny torch network with or without the attack planes, with its own encoder.
    /// One torch thread, as `koma train` sets on small machines: many tiny forward passes
    /// wait on the synchronisation of torch's thread pool otherwise (50x slower on a
    /// loaded 2-core machine).
    #[cfg(feature = "torch")]
    fn torch(attack_planes: bool) -> KomaNetwork {
        model::set_torch_threads(1, model::CpuShare::Whole);
        let cfg = model::NetConfig { attack_planes, ..model::NetConfig::tiny() };
        KomaNetwork::from_network(model::fresh_network(Variant::Shogi, &cfg, 1).unwrap())
    }

    #[cfg(feature = "torch")]
    #[test]
    fn networks_with_different_input_planes_meet() {
        let (attack, plain) = (torch(true), torch(false));
        assert_ne!(attack.network.encoder.input_len(), plain.network.encoder.input_len());
        let r = play_match(Variant::Shogi, &attack, &Opponent::Network(plain), &settings(2, 8, 4)).pair;
        assert_eq!(r.wdl.games(), 2);
        // A forward pass fed the wrong planes would fail and lose the game as a crash.
        assert_eq!(r.faults, [0, 0], "{r:?}");
        assert!(r.mean_plies() > 10.0, "{r:?}");
    }

    #[test]
    fn opponents_parse() {
        let ladder = Ladder::shipped();
        let (spec, elo) = parse_player("greedy", &ladder).unwrap();
        assert_eq!((spec.name.as_str(), elo), ("greedy", Some(2168.0)));
        assert_eq!(spec.kind, SpecKind::Greedy);
        let (spec, elo) = parse_player("fsf1", &ladder).unwrap();
        assert_eq!((spec.name.as_str(), elo), ("fsf1", Some(4269.0)));
        let (spec, elo) = parse_player("weak=usi:/bin/engine,depth=2", &ladder).unwrap();
        assert_eq!((spec.name.as_str(), elo), ("weak", None));
        assert!(parse_player("fsf9", &ladder).unwrap_err().to_string().contains("fsf1"));
        assert!(matches!(parse_player("n=koma:x", &ladder), Err(OpponentError::Network { .. })));
    }
}
