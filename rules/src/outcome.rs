//! The end of the game: mate, no moves, repetition, perpetual check,
//! impasse (declaration or 24 points), royal capture, bare king, length.

use crate::bitboard::Bits;
use crate::position::Position;
use crate::types::{Color, Kind, Square};
use crate::variant::RoyalRule;

/// Why a game ended. `name()` is the word `koma outcome` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    Checkmate,
    /// The side to move has no legal move but is not in check; it loses.
    NoMoves,
    Repetition,
    /// The fourth repetition with one side checking throughout: it loses.
    PerpetualCheck,
    /// An entering king's win by the end rules' [`ImpasseRule`]: a valid declaration
    /// (USI `bestmove win`; a draw under the 24-point declaration with 24 to 30 points),
    /// or under the try rule the king on the opponent king's starting square.
    Declaration,
    /// Both kings entered: adjudicated by the 24-point rule.
    Impasse,
    MaxMoves,
    /// The side to move has no royal piece left (sho, dai).
    RoyalCapture,
    /// The side to move has nothing but royals left (sho, dai).
    BareKing,
}

impl Reason {
    pub const ALL: [Reason; 9] = [
        Reason::Checkmate,
        Reason::NoMoves,
        Reason::Repetition,
        Reason::PerpetualCheck,
        Reason::Declaration,
        Reason::Impasse,
        Reason::MaxMoves,
        Reason::RoyalCapture,
        Reason::BareKing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::Checkmate => "checkmate",
            Reason::NoMoves => "no_moves",
            Reason::Repetition => "repetition",
            Reason::PerpetualCheck => "perpetual_check",
            Reason::Declaration => "declaration",
            Reason::Impasse => "impasse",
            Reason::MaxMoves => "max_moves",
            Reason::RoyalCapture => "royal_capture",
            Reason::BareKing => "bare_king",
        }
    }
}

/// A finished game: the winner (`None` for a draw) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub winner: Option<Color>,
    pub reason: Reason,
}

impl Outcome {
    /// `sente checkmate`, `draw repetition`, ...
    pub fn to_text(self) -> String {
        format!("{} {}", self.winner.map_or("draw", |c| c.name()), self.reason.name())
    }
}

/// Why a played game ended: the rules ([`Reason`]), a player (a resignation, or a fault
/// that loses: an illegal move, a false declaration, time, ...), or a stop before the
/// end (no result). [`EndCause::name`] is the word written to game files and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndCause {
    Rules(Reason),
    Resign,
    /// A declaration (USI `bestmove win`) that the position does not allow: it loses.
    FalseDeclaration,
    IllegalMove,
    /// Out of time on a clock.
    Time,
    /// No answer in time without a clock.
    Hang,
    Crash,
    ProtocolError,
    /// A result claim (XBoard) that the rules do not support.
    FalseClaim,
    /// Stopped before its end (a signal): no result.
    Stopped,
    /// Cut at the length cap and scored by the material there (self-play's
    /// `selfplay.cap_adjudication_margin`), where the rules would call it a draw.
    Adjudicated,
}

impl EndCause {
    /// Every cause that is not [`EndCause::Rules`], for [`EndCause::from_name`].
    const OTHERS: [EndCause; 10] = [
        EndCause::Resign,
        EndCause::FalseDeclaration,
        EndCause::IllegalMove,
        EndCause::Time,
        EndCause::Hang,
        EndCause::Crash,
        EndCause::ProtocolError,
        EndCause::FalseClaim,
        EndCause::Stopped,
        EndCause::Adjudicated,
    ];

    /// `checkmate`, `repetition`, ... ([`Reason::name`]), `resign`, `false_declaration`,
    /// `illegal_move`, `time`, `hang`, `crash`, `protocol_error`, `false_claim`, `stopped`,
    /// `adjudicated`.
    pub fn name(self) -> &'static str {
        match self {
            EndCause::Rules(r) => r.name(),
            EndCause::Resign => "resign",
            EndCause::FalseDeclaration => "false_declaration",
            EndCause::IllegalMove => "illegal_move",
            EndCause::Time => "time",
            EndCause::Hang => "hang",
            EndCause::Crash => "crash",
            EndCause::ProtocolError => "protocol_error",
            EndCause::FalseClaim => "false_claim",
            EndCause::Stopped => "stopped",
            EndCause::Adjudicated => "adjudicated",
        }
    }

    /// The cause of [`EndCause::name`] `name`.
    pub fn from_name(name: &str) -> Option<EndCause> {
        Reason::ALL.iter().map(|&r| EndCause::Rules(r)).chain(EndCause::OTHERS).find(|c| c.name() == name)
    }
}

impl std::fmt::Display for EndCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How entering kings end a standard shogi game (USI `EnteringKingRule`, by
/// YaneuraOu's names; docs/rules.md gives our reading of each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ImpasseRule {
    /// `NoEnteringKing`: no declaration and no adjudication; entering kings play on.
    NoDeclaration,
    /// `CSARule24`, the 24-point declaration: the side to move declares (USI
    /// `bestmove win`) with its king in the enemy camp, not in check, ten other pieces
    /// there; 31 points or more (camp and hand) win, 24 to 30 draw, fewer lose.
    Declaration24,
    /// `CSARule27`, computer shogi's declaration rule (the CSA 27-point rule): as
    /// [`ImpasseRule::Declaration24`] with 28 points for sente, 27 for gote; fewer lose.
    #[default]
    Declaration27,
    /// `TryRule`: a king that reaches the opponent king's starting square (5a for
    /// sente, 5i for gote) by a legal move wins; no declaration.
    Try,
    /// Amateur 24-point rule: once both kings stand in the enemy camp the
    /// game is adjudicated; under 24 points loses, both 24 or more draws. A
    /// declaration is judged by the 27-point rule.
    Points24,
}

/// An entering king rule name that [`ImpasseRule`] does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown entering king rule '{}' (expected NoEnteringKing, CSARule24, CSARule27, TryRule or Points24)",
    crate::excerpt(.0)
)]
pub struct UnknownImpasseRule(pub String);

impl ImpasseRule {
    /// The rules of USI's `EnteringKingRule` option, in the order it lists them
    /// (YaneuraOu's values, less its handicap variants `CSARule24H` and `CSARule27H`).
    pub const ENTERING_KING_RULES: [ImpasseRule; 4] =
        [ImpasseRule::NoDeclaration, ImpasseRule::Declaration24, ImpasseRule::Declaration27, ImpasseRule::Try];

    /// [`ImpasseRule::ENTERING_KING_RULES`]' names, as USI announces them.
    pub const ENTERING_KING_NAMES: [&'static str; 4] = ["NoEnteringKing", "CSARule24", "CSARule27", "TryRule"];

    /// YaneuraOu's name (`NoEnteringKing`, `CSARule24`, `CSARule27`, `TryRule`), or
    /// `Points24` for the amateur adjudication (which YaneuraOu does not have).
    pub fn name(self) -> &'static str {
        match self {
            ImpasseRule::NoDeclaration => "NoEnteringKing",
            ImpasseRule::Declaration24 => "CSARule24",
            ImpasseRule::Declaration27 => "CSARule27",
            ImpasseRule::Try => "TryRule",
            ImpasseRule::Points24 => "Points24",
        }
    }
}

impl std::fmt::Display for ImpasseRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ImpasseRule {
    type Err = UnknownImpasseRule;
    /// A [`ImpasseRule::name`], case aside.
    fn from_str(s: &str) -> Result<ImpasseRule, UnknownImpasseRule> {
        ImpasseRule::ENTERING_KING_RULES
            .into_iter()
            .chain([ImpasseRule::Points24])
            .find(|r| r.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownImpasseRule(s.to_string()))
    }
}

/// Settings for the end of the game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndRules {
    pub impasse: ImpasseRule,
    /// Game length in plies (SFEN move number - 1) at which the game is a
    /// draw; `None` for no limit.
    pub max_plies: Option<u32>,
}

impl Position {
    /// Has the game ended here, and how? Checked in this order: royals
    /// lost, bare king, fourfold repetition, no legal move, a try (the try rule),
    /// impasse (the 24-point adjudication), length. A declaration is the side to move's
    /// choice, not an end by itself: [`Position::declaration`].
    pub fn outcome(&self, rules: &EndRules) -> Option<Outcome> {
        self.outcome_with(rules, || self.has_legal_move())
    }

    /// [`Position::outcome`] where whether the side to move has a legal move is already
    /// known (`has_legal_move`, asked only when the answer matters): a search that lists
    /// the moves anyway need not look again.
    pub fn outcome_with(&self, rules: &EndRules, has_legal_move: impl FnOnce() -> bool) -> Option<Outcome> {
        let us = self.side;
        let them = us.opponent();
        let end = |winner: Option<Color>, reason| Some(Outcome { winner, reason });
        if self.t.spec.royal_rule != RoyalRule::Check && self.royals[us.index()].n == 0 {
            return end(Some(them), Reason::RoyalCapture);
        }
        if self.t.spec.bare_king_wins && self.only_royals(us) && !self.only_royals(them) {
            return end(Some(them), Reason::BareKing);
        }
        if let Some(o) = self.repetition() {
            return Some(o);
        }
        if !has_legal_move() {
            let reason = if self.in_check() { Reason::Checkmate } else { Reason::NoMoves };
            return end(Some(them), reason);
        }
        if rules.impasse == ImpasseRule::Try && self.tried(them) {
            return end(Some(them), Reason::Declaration);
        }
        if rules.impasse == ImpasseRule::Points24 && self.both_kings_entered() {
            let (s, g) = (self.impasse_points(Color::Sente, false), self.impasse_points(Color::Gote, false));
            let winner = match (s >= 24, g >= 24) {
                (true, false) => Some(Color::Sente),
                (false, true) => Some(Color::Gote),
                _ => None,
            };
            return end(winner, Reason::Impasse);
        }
        if let Some(max) = rules.max_plies {
            if self.move_number() > max {
                return end(None, Reason::MaxMoves);
            }
        }
        None
    }

    fn only_royals(&self, color: Color) -> bool {
        let royals = self.royals[color.index()].n as u32;
        self.occupied[color.index()].count() == royals
    }

    /// Fourfold repetition: a draw, or a loss for a side that gave check
    /// with every one of its moves since the first occurrence.
    pub fn repetition(&self) -> Option<Outcome> {
        if self.repetition_illegal {
            return None;
        }
        // Newest first: the last one counted is the first occurrence.
        let (count, first) = self.earlier_occurrences().fold((0, 0), |(count, _), i| (count + 1, i));
        if count < 3 {
            return None;
        }
        let n = self.history.len();
        let gave_check = self.checks_since(first);
        // The last move was made by the opponent of the side to move.
        let mover = |j: usize| if (n - 1 - j).is_multiple_of(2) { self.side.opponent() } else { self.side };
        for checker in [self.side.opponent(), self.side] {
            let mut moves = (first..n).filter(|&j| mover(j) == checker).peekable();
            if moves.peek().is_some() && moves.all(|j| gave_check[j - first]) {
                return Some(Outcome { winner: Some(checker.opponent()), reason: Reason::PerpetualCheck });
            }
        }
        Some(Outcome { winner: None, reason: Reason::Repetition })
    }

    /// Whether each move of the history from `first` on left its opponent in check, found
    /// by taking the moves back on a copy: only a repetition asks, so `play` need not
    /// test every move.
    fn checks_since(&self, first: usize) -> Vec<bool> {
        let mut pos = self.scratch();
        let mut checks = vec![false; self.history.len() - first];
        for (j, e) in self.history.iter().enumerate().skip(first).rev() {
            checks[j - first] = pos.in_check();
            pos.unmake(e.mv, e.undo);
        }
        checks
    }

    fn king_square(&self, color: Color) -> Option<Square> {
        self.royal_squares(color).iter().copied().find(|&s| self.piece_at(s).is_some_and(|p| p.kind() == Kind::King))
    }

    fn both_kings_entered(&self) -> bool {
        Color::BOTH.iter().all(|&c| self.king_square(c).is_some_and(|k| self.t.spec.in_zone(c, k.row())))
    }

    /// Impasse points of `color`: 5 for rook and bishop (promoted or not),
    /// 1 for other pieces, king excluded, hand included. With `zone_only`
    /// only board pieces in the enemy camp count (declaration rule).
    pub fn impasse_points(&self, color: Color, zone_only: bool) -> u32 {
        let spec = self.t.spec;
        let value = |k: Kind| spec.kind(k).map_or(1, |ks| ks.points as u32);
        let board: u32 = self
            .pieces()
            .filter(|(s, p)| p.color() == color && (!zone_only || spec.in_zone(color, s.row())))
            .map(|(_, p)| value(p.kind()))
            .sum();
        let hand: u32 = Kind::HAND.iter().map(|&k| self.hand(color, k) as u32 * value(k)).sum();
        board + hand
    }

    /// Does the side to move meet the 27-point declaration rule? King in
    /// the enemy camp, not in check, ten other pieces there, and 28 points
    /// (sente) or 27 (gote) from the camp and the hand.
    pub fn can_declare(&self) -> bool {
        self.can_declare_win(ImpasseRule::Declaration27)
    }

    /// Does a declaration by the side to move win under `rule`?
    pub fn can_declare_win(&self, rule: ImpasseRule) -> bool {
        self.declaration(rule).is_some_and(|o| o.winner == Some(self.side))
    }

    /// What a declaration (USI `bestmove win`) by the side to move gets under `rule`:
    /// a win, a draw (the 24-point declaration with 24 to 30 points), or `None` when
    /// the declaration is false (it loses). Both declaration rules need the king in the
    /// enemy camp, no check and ten other own pieces in the camp; points count the camp
    /// and the hand ([`Position::impasse_points`]). Under `Points24` a declaration is
    /// judged by the 27-point rule; under `NoEnteringKing` and the try rule there is none.
    pub fn declaration(&self, rule: ImpasseRule) -> Option<Outcome> {
        let us = self.side;
        let outcome = |winner| Some(Outcome { winner, reason: Reason::Declaration });
        match rule {
            ImpasseRule::NoDeclaration | ImpasseRule::Try => None,
            ImpasseRule::Declaration27 | ImpasseRule::Points24 => {
                let needed = if us == Color::Sente { 28 } else { 27 };
                if self.declaration_points()? >= needed {
                    outcome(Some(us))
                } else {
                    None
                }
            }
            ImpasseRule::Declaration24 => match self.declaration_points()? {
                31.. => outcome(Some(us)),
                24..=30 => outcome(None),
                _ => None,
            },
        }
    }

    /// The side to move's declaration points (camp and hand) when it meets the
    /// declaration rules' other conditions: standard shogi, its king in the enemy camp,
    /// not in check, at least ten other own pieces in the camp. `None` otherwise.
    fn declaration_points(&self) -> Option<u32> {
        if !self.t.spec.drops {
            return None;
        }
        let us = self.side;
        let king = self.king_square(us)?;
        if !self.t.spec.in_zone(us, king.row()) || self.in_check() {
            return None;
        }
        let in_zone = self
            .pieces()
            .filter(|(s, p)| p.color() == us && p.kind() != Kind::King && self.t.spec.in_zone(us, s.row()))
            .count();
        (in_zone >= 10).then(|| self.impasse_points(us, true))
    }

    /// The square a king of `color` wins on under the try rule: the opponent king's
    /// starting square, 5a for sente and 5i for gote. Standard shogi only.
    pub fn try_square(&self, color: Color) -> Option<Square> {
        if self.t.spec.variant != crate::Variant::Shogi {
            return None;
        }
        Some(Square::new(5, if color == Color::Sente { 1 } else { 9 }))
    }

    /// Does `color`'s king stand on its try square ([`Position::try_square`])?
    pub fn tried(&self, color: Color) -> bool {
        self.try_square(color).is_some_and(|t| self.king_square(color) == Some(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    fn after(sfen: &str, moves: &str) -> Position {
        let mut pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        for m in moves.split_whitespace() {
            pos.play_usi(m).unwrap();
        }
        pos
    }

    #[test]
    fn end_cause_names_are_the_file_words_and_read_back() {
        let names: Vec<&str> =
            Reason::ALL.iter().map(|&r| EndCause::Rules(r)).chain(EndCause::OTHERS).map(EndCause::name).collect();
        assert_eq!(
            names.join(" "),
            "checkmate no_moves repetition perpetual_check declaration impasse max_moves royal_capture bare_king \
             resign false_declaration illegal_move time hang crash protocol_error false_claim stopped adjudicated"
        );
        for n in names {
            assert_eq!(EndCause::from_name(n).map(EndCause::name), Some(n));
        }
        assert_eq!(EndCause::from_name("resigned"), None);
    }

    fn text(pos: &Position, rules: &EndRules) -> String {
        pos.outcome(rules).map_or("none ongoing".into(), |o| o.to_text())
    }

    #[test]
    fn perpetual_check_loses_for_the_checker_at_the_fourth_occurrence() {
        let cycle = "9b9a 1a1b 9a9b 1b1a ";
        let sfen = "8k/R8/9/9/9/9/9/9/4K4 b - 1";
        let rules = EndRules::default();
        assert_eq!(text(&after(sfen, &cycle.repeat(2)), &rules), "none ongoing");
        assert_eq!(text(&after(sfen, &cycle.repeat(3)), &rules), "gote perpetual_check");
    }

    #[test]
    fn repetition_without_constant_check_is_a_draw() {
        // Same king shuffle, but the rook returns by a quiet square first.
        let sfen = "8k/9/R8/9/9/9/9/9/4K4 b - 1";
        let cycle = "9c9d 1a2a 9d9c 2a1a ";
        let rules = EndRules::default();
        assert_eq!(text(&after(sfen, &cycle.repeat(3)), &rules), "draw repetition");
        assert_eq!(text(&after(sfen, &cycle.repeat(2)), &rules), "none ongoing");
    }

    #[test]
    fn declaration_needs_ten_pieces_and_28_points_for_sente() {
        let ok = Position::from_sfen(Variant::Shogi, "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RB 1").unwrap();
        assert!(ok.can_declare());
        // 24 points: one rook short.
        let short = Position::from_sfen(Variant::Shogi, "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b R 1").unwrap();
        assert!(!short.can_declare());
        // Gote's king is not in its zone.
        let gote = Position::from_sfen(Variant::Shogi, "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 w RB 1").unwrap();
        assert!(!gote.can_declare());
        // Nine pieces in the zone are not enough, whatever the points.
        let few = Position::from_sfen(Variant::Shogi, "4K4/PPPPPPP2/3RB4/9/9/9/9/9/4k4 b RBP 1").unwrap();
        assert!(!few.can_declare());
    }

    fn declared(sfen: &str, rule: ImpasseRule) -> String {
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        pos.declaration(rule).map_or("false".into(), |o| o.to_text())
    }

    /// Sente's king in the camp with eleven other pieces there: nine pawns, a rook and a
    /// bishop (19 points) and a rook and a bishop in hand (10): 29 points. The 27-point
    /// rule (28 for sente) gives the win, the 24-point rule (31 to win) only a draw.
    #[test]
    fn the_24_and_27_point_declarations_disagree_at_29_points() {
        let sfen29 = "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RB 1";
        let pos = Position::from_sfen(Variant::Shogi, sfen29).unwrap();
        assert_eq!(pos.impasse_points(Color::Sente, true), 29);
        assert_eq!(declared(sfen29, ImpasseRule::Declaration27), "sente declaration");
        assert_eq!(declared(sfen29, ImpasseRule::Declaration24), "draw declaration");
        assert!(pos.can_declare_win(ImpasseRule::Declaration27));
        assert!(!pos.can_declare_win(ImpasseRule::Declaration24));
        assert_eq!(declared(sfen29, ImpasseRule::NoDeclaration), "false");
        assert_eq!(declared(sfen29, ImpasseRule::Try), "false");
        // Two more pawns in hand: 31 points win under both rules.
        let sfen31 = "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RB2P 1";
        assert_eq!(declared(sfen31, ImpasseRule::Declaration24), "sente declaration");
        assert_eq!(declared(sfen31, ImpasseRule::Declaration27), "sente declaration");
        // 30 points: still a draw by the 24-point rule.
        assert_eq!(
            declared("4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RBP 1", ImpasseRule::Declaration24),
            "draw declaration"
        );
        // 24 points (one rook short of 29): a draw by the 24-point rule, false by the 27.
        let sfen24 = "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b R 1";
        assert_eq!(declared(sfen24, ImpasseRule::Declaration24), "draw declaration");
        assert_eq!(declared(sfen24, ImpasseRule::Declaration27), "false");
        // 23 points: false under both.
        let sfen23 = "4K4/PPPPPPPP1/3RB4/9/9/9/9/9/4k4 b R 1";
        assert_eq!(Position::from_sfen(Variant::Shogi, sfen23).unwrap().impasse_points(Color::Sente, true), 23);
        assert_eq!(declared(sfen23, ImpasseRule::Declaration24), "false");
        // Gote needs 27 under the 27-point rule: 19 in the camp and a rook and three pawns
        // in hand. The same 27 points are a draw by the 24-point rule.
        let gote27 = "4K4/9/9/9/9/9/3rb4/ppppppppp/4k4 w r3p 1";
        let g = Position::from_sfen(Variant::Shogi, gote27).unwrap();
        assert_eq!(g.impasse_points(Color::Gote, true), 27);
        assert_eq!(declared(gote27, ImpasseRule::Declaration27), "gote declaration");
        assert_eq!(declared(gote27, ImpasseRule::Declaration24), "draw declaration");
        // Sente with the same 27 points falls one short of its 28.
        let sente27 = "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b R2P 1";
        assert_eq!(Position::from_sfen(Variant::Shogi, sente27).unwrap().impasse_points(Color::Sente, true), 26);
        let sente27 = "4K4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b R3P 1";
        assert_eq!(Position::from_sfen(Variant::Shogi, sente27).unwrap().impasse_points(Color::Sente, true), 27);
        assert_eq!(declared(sente27, ImpasseRule::Declaration27), "false");
        // In check, no declaration under either rule.
        let checked = "3gK4/PPPPPPPPP/3RB4/9/9/9/9/9/4k4 b RB2P 1";
        assert!(Position::from_sfen(Variant::Shogi, checked).unwrap().in_check());
        assert_eq!(declared(checked, ImpasseRule::Declaration24), "false");
        assert_eq!(declared(checked, ImpasseRule::Declaration27), "false");
    }

    #[test]
    fn entering_king_rules_read_their_yaneuraou_names() {
        for (rule, name) in ImpasseRule::ENTERING_KING_RULES.iter().zip(ImpasseRule::ENTERING_KING_NAMES) {
            assert_eq!(rule.name(), name);
            assert_eq!(name.parse::<ImpasseRule>(), Ok(*rule));
            assert_eq!(name.to_ascii_lowercase().parse::<ImpasseRule>(), Ok(*rule));
        }
        assert_eq!("Points24".parse::<ImpasseRule>(), Ok(ImpasseRule::Points24));
        assert_eq!(ImpasseRule::default(), ImpasseRule::Declaration27);
        assert!("CSARule25".parse::<ImpasseRule>().unwrap_err().to_string().contains("CSARule25"));
    }

    /// The try rule: sente's king one step from 5a steps there and wins; gote's reaches
    /// 5i. Under the other rules the game goes on; a try square the opponent attacks
    /// cannot be entered (the move is illegal).
    #[test]
    fn a_king_that_reaches_the_try_square_wins_under_the_try_rule() {
        let try_rule = EndRules { impasse: ImpasseRule::Try, max_plies: None };
        let sfen = "9/4K4/9/9/9/9/9/9/k8 b - 1";
        assert_eq!(text(&after(sfen, ""), &try_rule), "none ongoing");
        assert_eq!(text(&after(sfen, "5b4a"), &try_rule), "none ongoing", "4a is not the try square");
        let tried = after(sfen, "5b5a");
        assert!(tried.tried(Color::Sente));
        assert_eq!(text(&tried, &try_rule), "sente declaration");
        assert_eq!(text(&tried, &EndRules::default()), "none ongoing");
        let no_rule = EndRules { impasse: ImpasseRule::NoDeclaration, max_plies: None };
        assert_eq!(text(&tried, &no_rule), "none ongoing");
        // Gote's try square is 5i.
        let gote = after("K8/9/9/9/9/9/9/4k4/9 w - 1", "5h5i");
        assert_eq!(text(&gote, &try_rule), "gote declaration");
        // A rook on 1a guards 5a: the king may not step there.
        let mut guarded = Position::from_sfen(Variant::Shogi, "8r/4K4/9/9/9/9/9/9/k8 b - 1").unwrap();
        assert!(guarded.play_usi("5b5a").is_err());
        assert_eq!(
            Position::from_sfen(Variant::Sho, "4k4/9/9/9/9/9/9/9/4K4 b - 1").unwrap().try_square(Color::Sente),
            None
        );
    }

    #[test]
    fn twenty_four_point_rule_adjudicates_when_both_kings_entered() {
        let sfen = "4K4/PPPPPPPPP/3RB4/9/4k4/9/9/9/9 b RB 1";
        let rules = EndRules { impasse: ImpasseRule::Points24, max_plies: None };
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        assert_eq!(text(&pos, &rules), "none ongoing", "gote's king has not entered");
        // Gote's king walks into sente's camp: 29 points against 0.
        let entered = Position::from_sfen(Variant::Shogi, "4K4/PPPPPPPPP/3RB4/9/9/9/4k4/9/9 b RB 1").unwrap();
        assert_eq!(text(&entered, &rules), "sente impasse");
        assert_eq!(entered.impasse_points(Color::Sente, false), 29);
        // Under the declaration rule the same position plays on.
        assert_eq!(text(&entered, &EndRules::default()), "none ongoing");
    }

    #[test]
    fn maximum_length_is_a_draw_unless_mated_first() {
        let rules = EndRules { impasse: ImpasseRule::Declaration27, max_plies: Some(4) };
        let start = crate::Position::startpos(Variant::Shogi).to_sfen();
        assert_eq!(text(&after(&start, "7g7f 3c3d 2g2f"), &rules), "none ongoing");
        assert_eq!(text(&after(&start, "7g7f 3c3d 2g2f 4c4d"), &rules), "draw max_moves");
    }

    #[test]
    fn a_side_without_moves_loses_even_out_of_check() {
        // Gote's king on 9a: gold on 7b covers 8a and 8b, the pawn covers 9b.
        let pos = Position::from_sfen(Variant::Shogi, "k8/2G6/P8/9/9/9/9/9/4K4 w - 1").unwrap();
        assert!(!pos.in_check());
        assert_eq!(text(&pos, &EndRules::default()), "sente no_moves");
    }

    #[test]
    fn sho_loses_when_all_royals_are_gone_and_lives_on_with_one() {
        // Sente king and prince; gote rook takes the prince: sente still
        // has its king, so play goes on under the check rule.
        let mut p = Position::from_sfen(Variant::Sho, "4k4/9/9/9/4r4/8P/9/4+E4/4K4 w - 1").unwrap();
        assert!(!p.in_check());
        p.play_usi("5e5h").unwrap();
        assert_eq!(p.royals(Color::Sente).len(), 1);
        assert!(p.in_check());
        assert_eq!(text(&p, &EndRules::default()), "none ongoing");
        // Capturing the last royal ends the game.
        let mut q = Position::from_sfen(Variant::Sho, "4k4/9/9/9/4r4/8P/9/4+E4/4K4 w - 1").unwrap();
        q.play_usi("5e5h").unwrap();
        q.play_usi("1f1e").unwrap_err(); // sente must answer the check
                                         // Without other pieces the side to move is bare and loses.
        let bare = Position::from_sfen(Variant::Sho, "4k4/9/9/9/9/9/9/4r4/4K4 b - 1").unwrap();
        assert_eq!(text(&bare, &EndRules::default()), "gote bare_king");
    }
}
