//! Evaluation games: the network (a small deterministic search, or the raw policy with
//! `simulations = 1`) against a baseline player or another network, colours
//! alternating, many games at once with their network leaves batched into one forward
//! pass. Games are adjudicated by `rules::Position::outcome` with a maximum length
//! (and the declaration rule); the score is (wins + draws / 2) / games.

use arena::baselines::{BaselinePlayer, GreedyMover, RandomMover};
use model::encoding::Encoder;
use model::{Evaluation, Evaluator, Network};
use rules::{Color, EndRules, Position, Variant};
use search::{Rng, SearchConfig};
use search::{Search, Step};

/// Who the network plays.
pub enum Opponent {
    Baseline(Box<dyn BaselinePlayer>),
    Net(Box<Network>),
}

impl Opponent {
    /// `random` or `greedy`.
    pub fn baseline(name: &str) -> Option<Opponent> {
        match name {
            "random" => Some(Opponent::Baseline(Box::new(RandomMover))),
            "greedy" => Some(Opponent::Baseline(Box::new(GreedyMover::default()))),
            _ => None,
        }
    }
}

/// How evaluation games are played.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    pub games: usize,
    /// Simulations per network move (1 = raw policy).
    pub simulations: u32,
    pub max_plies: u32,
    /// Random plies at the start; games 2k and 2k+1 share the opening with colours
    /// swapped.
    pub random_plies: u32,
    pub search: SearchConfig,
    pub seed: u64,
    /// When set, the match stops after the current batch of moves (a signal), returning the
    /// games finished so far.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl MatchSettings {
    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst))
    }
}

/// Result of a match, from the network's view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MatchResult {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Sum of game lengths in plies.
    pub plies: u64,
}

impl MatchResult {
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// (wins + draws / 2) / games, in 0..1.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
    }

    /// `+wins =draws -losses`.
    pub fn tally(&self) -> String {
        format!("+{} ={} -{}", self.wins, self.draws, self.losses)
    }

    /// Elo difference implied by the score, the score clamped to
    /// [1/(2n), 1 - 1/(2n)] so that 0 and 1 give finite values.
    pub fn elo(&self) -> f64 {
        elo_from_score(self.score(), self.games())
    }
}

/// `-400 log10(1/s - 1)` with `s` clamped to `[1/(2n), 1 - 1/(2n)]` (n games, at least 1).
pub fn elo_from_score(score: f64, games: u32) -> f64 {
    let eps = 0.5 / games.max(1) as f64;
    let s = score.clamp(eps, 1.0 - eps);
    -400.0 * (1.0 / s - 1.0).log10()
}

struct Game {
    pos: Position,
    ours: Color,
    /// Search per side that uses a network (index: colour).
    searches: [Option<Search>; 2],
    done: bool,
}

fn game_end(pos: &Position, rules: &EndRules) -> Option<Option<Color>> {
    if let Some(o) = pos.outcome(rules) {
        return Some(o.winner);
    }
    if pos.can_declare() {
        return Some(Some(pos.side_to_move()));
    }
    None
}

/// Plays `settings.games` games of `ours` against `opponent` in `variant`.
pub fn play_match(variant: Variant, ours: &Network, opponent: Opponent, settings: &MatchSettings) -> MatchResult {
    play_match_observed(variant, ours, opponent, settings, &mut |_| {})
}

/// [`play_match`], calling `on_games` with the result so far whenever games have ended
/// (for a progress display).
pub fn play_match_observed(
    variant: Variant,
    ours: &Network,
    mut opponent: Opponent,
    settings: &MatchSettings,
    on_games: &mut dyn FnMut(&MatchResult),
) -> MatchResult {
    // Each network reads its own input planes (they may differ in options).
    let encoders = [
        ours.encoder.clone(),
        match &opponent {
            Opponent::Net(n) => n.encoder.clone(),
            Opponent::Baseline(_) => Encoder::new(variant),
        },
    ];
    let rules = EndRules { max_plies: Some(settings.max_plies), ..EndRules::default() };
    let mut rng = Rng::new(settings.seed);
    let mut games: Vec<Game> = Vec::with_capacity(settings.games);
    let mut opening = Position::startpos(variant);
    for i in 0..settings.games {
        if i % 2 == 0 {
            // A fresh opening for each pair (retry if the random plies end the game).
            for _ in 0..20 {
                opening = Position::startpos(variant);
                let mut ok = true;
                for _ in 0..settings.random_plies {
                    let moves = opening.legal_moves();
                    if moves.is_empty() || game_end(&opening, &rules).is_some() {
                        ok = false;
                        break;
                    }
                    opening.play(moves[rng.below(moves.len())]);
                }
                if ok && game_end(&opening, &rules).is_none() {
                    break;
                }
            }
        }
        let ours_color = if i % 2 == 0 { Color::Sente } else { Color::Gote };
        let mk = || Search::new(settings.search.clone(), rules, variant);
        let opp_is_net = matches!(opponent, Opponent::Net(_));
        let mut searches = [None, None];
        searches[ours_color.index()] = Some(mk());
        if opp_is_net {
            searches[ours_color.opponent().index()] = Some(mk());
        }
        games.push(Game { pos: opening.clone(), ours: ours_color, searches, done: false });
    }
    let mut result = MatchResult::default();
    let mut started = vec![false; games.len()];
    let mut bufs: [Vec<f32>; 2] = [Vec::new(), Vec::new()];
    let mut waiting: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut out = Evaluation::new();
    let mut reported = 0;
    let finish = |g: &mut Game, winner: Option<Color>, result: &mut MatchResult| {
        g.done = true;
        match winner {
            None => result.draws += 1,
            Some(c) if c == g.ours => result.wins += 1,
            Some(_) => result.losses += 1,
        }
        result.plies += g.pos.plies_played() as u64;
    };
    loop {
        if settings.stopped() {
            break;
        }
        // 0: our network, 1: the opponent's network.
        waiting[0].clear();
        waiting[1].clear();
        bufs[0].clear();
        bufs[1].clear();
        let mut active = 0;
        for (gi, g) in games.iter_mut().enumerate() {
            // Advance this game until a network evaluation is needed or it ends.
            loop {
                if g.done {
                    break;
                }
                if let Some(w) = game_end(&g.pos, &rules) {
                    finish(g, w, &mut result);
                    break;
                }
                let side = g.pos.side_to_move();
                let Some(search) = g.searches[side.index()].as_mut() else {
                    // Baseline move.
                    let Opponent::Baseline(p) = &mut opponent else { unreachable!() };
                    match p.choose(&g.pos, &mut rng) {
                        Some(mv) => g.pos.play(mv),
                        None => {
                            let w = Some(side.opponent());
                            finish(g, w, &mut result);
                        }
                    }
                    continue;
                };
                if !started[gi] {
                    search.start(&g.pos, settings.simulations, false);
                    started[gi] = true;
                }
                let slot = if side == g.ours { 0 } else { 1 };
                let il = encoders[slot].input_len();
                let off = bufs[slot].len();
                bufs[slot].resize(off + il, 0.0);
                match search.select(&encoders[slot], &mut bufs[slot][off..off + il], &mut rng) {
                    Step::NeedsEval => {
                        waiting[slot].push(gi);
                        break;
                    }
                    Step::Done | Step::Collision => {
                        bufs[slot].truncate(off);
                        if search.pending() > 0 {
                            // Cannot happen with one leaf at a time; be safe.
                            break;
                        }
                        started[gi] = false;
                        match search.choose_move(0.0, &mut rng) {
                            Some(mv) => g.pos.play(mv),
                            None => {
                                let w = Some(side.opponent());
                                finish(g, w, &mut result);
                            }
                        }
                    }
                }
            }
            if !g.done {
                active += 1;
            }
        }
        if result.games() != reported {
            reported = result.games();
            on_games(&result);
        }
        if active == 0 {
            break;
        }
        for slot in 0..2 {
            if waiting[slot].is_empty() {
                continue;
            }
            let ev: &dyn Evaluator = if slot == 0 {
                ours.evaluator.as_ref()
            } else {
                match &opponent {
                    Opponent::Net(n) => n.evaluator.as_ref(),
                    Opponent::Baseline(_) => unreachable!(),
                }
            };
            let n = waiting[slot].len();
            if ev.evaluate_into(&bufs[slot], n, &mut out).is_err() {
                // A failed forward pass: adjudicate the remaining games as draws.
                for g in games.iter_mut().filter(|g| !g.done) {
                    finish(g, None, &mut result);
                }
                on_games(&result);
                return result;
            }
            for (j, &gi) in waiting[slot].iter().enumerate() {
                let g = &mut games[gi];
                let side = g.pos.side_to_move();
                if let Some(s) = g.searches[side.index()].as_mut() {
                    s.apply(out.policy(j), out.wdl(j), &mut rng);
                }
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_is_clamped_and_symmetric() {
        assert_eq!(elo_from_score(0.5, 10), 0.0);
        assert!((elo_from_score(0.75, 100) + elo_from_score(0.25, 100)).abs() < 1e-9);
        assert!(elo_from_score(1.0, 100).is_finite());
        assert!(elo_from_score(1.0, 100) > 800.0);
    }

    #[test]
    fn uniform_search_plays_full_games() {
        let ev = Network::uniform(Variant::Shogi);
        let s = MatchSettings {
            games: 4,
            simulations: 4,
            max_plies: 60,
            random_plies: 2,
            search: SearchConfig::default(),
            seed: 3,
            stop: None,
        };
        let mut seen = Vec::new();
        let r = play_match_observed(Variant::Shogi, &ev, Opponent::baseline("random").unwrap(), &s, &mut |r| {
            seen.push(r.games())
        });
        assert_eq!(r.games(), 4);
        assert_eq!(seen.last(), Some(&4), "the last report has every game");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "reports only when games end: {seen:?}");
        let r = play_match(Variant::Shogi, &ev, Opponent::Net(Box::new(Network::uniform(Variant::Shogi))), &s);
        assert_eq!(r.games(), 4);
    }

    #[test]
    fn networks_with_different_input_planes_meet() {
        use model::{NetConfig, Precision};
        let torch = |attack_planes: bool| {
            let cfg = NetConfig {
                blocks: 1,
                channels: 8,
                value_channels: 2,
                value_hidden: 8,
                attack_planes,
                ..Default::default()
            };
            let shape = Encoder::for_net(Variant::Shogi, &cfg).net_shape();
            let net = model::Net::new(&cfg, shape, 1, model::tch::Device::Cpu).unwrap();
            Network::of_net(&net, Variant::Shogi, model::tch::Device::Cpu, Precision::F32).unwrap()
        };
        let (attack, plain) = (torch(true), torch(false));
        assert_ne!(attack.evaluator.shape(), plain.evaluator.shape());
        let s = MatchSettings {
            games: 2,
            simulations: 4,
            max_plies: 40,
            random_plies: 2,
            search: SearchConfig::default(),
            seed: 5,
            stop: None,
        };
        let r = play_match(Variant::Shogi, &attack, Opponent::Net(Box::new(plain)), &s);
        assert_eq!(r.games(), 2);
        // A forward pass fed the wrong planes fails and ends the games at once (as draws).
        assert!(r.plies >= 2 * 10, "the games stopped early: {r:?}");
    }
}
