//! Input planes: what the network sees of a position, from the side to
//! move's view (the board turned for gote). See the README for the table.

use super::policy::ViewTable;
use super::EncoderOptions;
use crate::inference::planes::PlaneValue;
use rules::{Color, Kind, Piece, Position, RoyalRule, Variant};

/// What one input plane holds. "Own" is the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputPlane {
    /// 1 where a piece of this kind and promotion state stands.
    Piece { own: bool, kind: Kind, promoted: bool },
    /// Constant: pieces of `kind` in hand / the most there can be.
    Hand { own: bool, kind: Kind },
    /// Constant 1 when the position occurred at least `at_least` times
    /// before in the game.
    Repetition { at_least: u8 },
    /// Constant 1 when the side to move is in check.
    InCheck,
    /// Constant: plies since the game start / the variant's horizon, at most 1.
    Progress,
    /// Constant 1 when the side to move is gote.
    Colour,
    /// Constant 1 (marks the board for zero-padded convolutions).
    Ones,
    /// 1 where a piece of this kind and promotion state attacks (or
    /// defends) the square (option `attack_planes`).
    Attack { own: bool, kind: Kind, promoted: bool },
    /// 1 where at least `at_least` pieces of that side attack the square
    /// (option `attack_planes`).
    AttackCount { own: bool, at_least: u8 },
}

impl std::fmt::Display for InputPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |own: bool| if own { "own" } else { "opponent" };
        let plus = |p: bool| if p { "+" } else { "" };
        match *self {
            InputPlane::Piece { own, kind, promoted } => write!(f, "{} {}{kind:?}", side(own), plus(promoted)),
            InputPlane::Hand { own, kind } => write!(f, "{} hand {kind:?}", side(own)),
            InputPlane::Repetition { at_least } => write!(f, "repeated >= {at_least}"),
            InputPlane::InCheck => f.write_str("in check"),
            InputPlane::Progress => f.write_str("progress"),
            InputPlane::Colour => f.write_str("colour (gote to move)"),
            InputPlane::Ones => f.write_str("ones"),
            InputPlane::Attack { own, kind, promoted } => {
                write!(f, "{} attacks by {}{kind:?}", side(own), plus(promoted))
            }
            InputPlane::AttackCount { own, at_least } => {
                write!(f, "{} attackers >= {at_least}", side(own))
            }
        }
    }
}

/// Most pieces of a hand kind one side can hold (standard shogi's set).
pub fn hand_max(kind: Kind) -> u8 {
    match kind {
        Kind::Rook | Kind::Bishop => 2,
        Kind::Pawn => 18,
        _ => 4,
    }
}

/// Plies at which the progress plane reaches 1.
pub fn progress_horizon(variant: Variant) -> u32 {
    match variant {
        Variant::Shogi | Variant::Sho => 512,
        Variant::Dai => 1024,
    }
}

const NONE: u16 = u16::MAX;

/// A movement leg in board coordinates (`dx` along columns, `dy` along rows).
#[derive(Clone, Copy, Debug)]
struct AbsLeg {
    dx: i8,
    dy: i8,
    range: u8,
    jump: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct FeatureLayout {
    pub planes: Vec<InputPlane>,
    size: usize,
    /// `piece[side to move][piece code]`: plane of that piece.
    piece: Box<[[u16; 128]; 2]>,
    /// `hand[own as usize][i]`: plane of `Kind::HAND[i]`.
    hand: Option<[[u16; 7]; 2]>,
    repetition: Option<u16>,
    in_check: Option<u16>,
    progress: u16,
    colour: u16,
    ones: u16,
    horizon: f32,
    /// Attack planes: by piece code, as for `piece`, and the count planes
    /// `[own as usize]`, with the legs of every code.
    attack: Option<Box<[[u16; 128]; 2]>>,
    attack_count: [u16; 2],
    legs: Vec<Vec<AbsLeg>>,
    /// Piece codes of gote's pieces.
    gote_code: [bool; 128],
    view: ViewTable,
}

impl FeatureLayout {
    pub fn new(variant: Variant, options: &EncoderOptions) -> FeatureLayout {
        let spec = variant.spec();
        let mut planes = Vec::new();
        // (kind, promoted) pairs of the variant: unpromoted in spec order, then promoted.
        let mut kinds: Vec<(Kind, bool)> = spec.kinds.iter().map(|k| (k.kind, false)).collect();
        kinds.extend(spec.kinds.iter().filter(|k| k.promotion.is_some()).map(|k| (k.kind, true)));
        let piece_block = |planes: &mut Vec<InputPlane>, attack: bool| {
            let mut table = Box::new([[NONE; 128]; 2]);
            for own in [true, false] {
                for &(kind, promoted) in &kinds {
                    let plane = planes.len() as u16;
                    planes.push(if attack {
                        InputPlane::Attack { own, kind, promoted }
                    } else {
                        InputPlane::Piece { own, kind, promoted }
                    });
                    for stm in Color::BOTH {
                        let color = if own { stm } else { stm.opponent() };
                        table[stm.index()][Piece::new(color, kind, promoted).code() as usize] = plane;
                    }
                }
            }
            table
        };
        let piece = piece_block(&mut planes, false);
        let mut gote_code = [false; 128];
        for k in spec.kinds {
            for promoted in [false, true] {
                gote_code[Piece::new(Color::Gote, k.kind, promoted).code() as usize] = true;
            }
        }
        let hand = spec.drops.then(|| {
            let mut h = [[NONE; 7]; 2];
            for own in [true, false] {
                for (i, &kind) in Kind::HAND.iter().enumerate() {
                    h[own as usize][i] = planes.len() as u16;
                    planes.push(InputPlane::Hand { own, kind });
                }
            }
            h
        });
        let repetition = (!spec.repetition_illegal).then(|| {
            let p = planes.len() as u16;
            planes.push(InputPlane::Repetition { at_least: 1 });
            planes.push(InputPlane::Repetition { at_least: 2 });
            p
        });
        let in_check = (spec.royal_rule != RoyalRule::CaptureAll).then(|| {
            planes.push(InputPlane::InCheck);
            planes.len() as u16 - 1
        });
        let push = |planes: &mut Vec<InputPlane>, p: InputPlane| {
            planes.push(p);
            planes.len() as u16 - 1
        };
        let progress = push(&mut planes, InputPlane::Progress);
        let colour = push(&mut planes, InputPlane::Colour);
        let ones = push(&mut planes, InputPlane::Ones);
        let mut attack_count = [NONE; 2];
        let mut legs = vec![Vec::new(); 128];
        let attack = options.attack_planes.then(|| {
            let table = piece_block(&mut planes, true);
            for own in [true, false] {
                attack_count[own as usize] = planes.len() as u16;
                for at_least in 1..=3 {
                    planes.push(InputPlane::AttackCount { own, at_least });
                }
            }
            for ks in spec.kinds {
                for (promoted, movement) in [(false, Some(ks.movement)), (true, ks.promotion.map(|p| p.0))] {
                    let Some(m) = movement else { continue };
                    for color in Color::BOTH {
                        // Legs are written from sente's view (dy < 0 forward):
                        // gote's run the other way on the board.
                        let sign = if color == Color::Sente { 1 } else { -1 };
                        legs[Piece::new(color, ks.kind, promoted).code() as usize] = m
                            .legs
                            .iter()
                            .map(|l| AbsLeg { dx: l.dx * sign, dy: l.dy * sign, range: l.range, jump: l.jump })
                            .collect();
                    }
                }
            }
            table
        });
        FeatureLayout {
            planes,
            size: spec.size,
            piece,
            hand,
            repetition,
            in_check,
            progress,
            colour,
            ones,
            horizon: progress_horizon(variant) as f32,
            attack,
            attack_count,
            legs,
            gote_code,
            view: ViewTable::new(spec.size),
        }
    }

    #[inline]
    fn fill<T: PlaneValue>(out: &mut [T], plane: u16, n: usize, value: f32) {
        let p = plane as usize * n;
        out[p..p + n].fill(T::from_f32(value));
    }

    /// Writes in the number type the planes travel in (f32, or the 16-bit type of the
    /// network's precision): the values are rounded once, as the device would round them.
    pub fn encode<T: PlaneValue>(&self, pos: &Position, out: &mut [T]) {
        let size = self.size;
        let n = size * size;
        assert_eq!(out.len(), self.planes.len() * n, "input buffer length");
        out.fill(T::ZERO);
        let us = pos.side_to_move();
        let gote = us == Color::Gote;
        let table = &self.piece[us.index()];
        // Codes on the board by view square, for the attack planes.
        let mut board = [0u8; 256];
        for (sq, p) in pos.pieces() {
            let (c, r) = self.view.col_row(sq, gote);
            let v = r as usize * size + c as usize;
            board[v] = p.code();
            let plane = table[p.code() as usize];
            debug_assert_ne!(plane, NONE, "piece {p:?} not in the variant");
            out[plane as usize * n + v] = T::ONE;
        }
        if let Some(hand) = &self.hand {
            for (i, &kind) in Kind::HAND.iter().enumerate() {
                for (own, color) in [(true, us), (false, us.opponent())] {
                    let count = pos.hand(color, kind);
                    if count > 0 {
                        let v = (count as f32 / hand_max(kind) as f32).min(1.0);
                        Self::fill(out, hand[own as usize][i], n, v);
                    }
                }
            }
        }
        if let Some(p) = self.repetition {
            let reps = pos.repetitions();
            if reps >= 1 {
                Self::fill(out, p, n, 1.0);
            }
            if reps >= 2 {
                Self::fill(out, p + 1, n, 1.0);
            }
        }
        if let Some(p) = self.in_check {
            if pos.in_check() {
                Self::fill(out, p, n, 1.0);
            }
        }
        let plies = pos.move_number().saturating_sub(1) as f32;
        Self::fill(out, self.progress, n, (plies / self.horizon).min(1.0));
        if gote {
            Self::fill(out, self.colour, n, 1.0);
        }
        Self::fill(out, self.ones, n, 1.0);
        if let Some(attack) = &self.attack {
            self.encode_attacks(&attack[us.index()], us, &board[..n], out);
        }
    }

    /// Attack planes: every square each piece attacks (pins and the check
    /// rule ignored; own pieces on the square count as defended).
    fn encode_attacks<T: PlaneValue>(&self, table: &[u16; 128], us: Color, board: &[u8], out: &mut [T]) {
        let size = self.size as i32;
        let n = board.len();
        let gote = us == Color::Gote;
        let mut count = [[0u8; 256]; 2];
        for (v, &code) in board.iter().enumerate() {
            if code == 0 {
                continue;
            }
            let own = self.gote_code[code as usize] == gote;
            let plane = table[code as usize] as usize * n;
            let counts = &mut count[own as usize];
            let (c0, r0) = ((v % self.size) as i32, (v / self.size) as i32);
            for leg in &self.legs[code as usize] {
                // Board legs in view coordinates: turn them for gote's view.
                let (dx, dy) = if gote { (-(leg.dx as i32), -(leg.dy as i32)) } else { (leg.dx as i32, leg.dy as i32) };
                let (mut c, mut r) = (c0, r0);
                let mut k = 0;
                while k < leg.range {
                    c += dx;
                    r += dy;
                    if c < 0 || r < 0 || c >= size || r >= size {
                        break;
                    }
                    let t = (r * size + c) as usize;
                    if out[plane + t] == T::ZERO {
                        out[plane + t] = T::ONE;
                    }
                    counts[t] = counts[t].saturating_add(1);
                    if leg.jump || board[t] != 0 {
                        break;
                    }
                    k += 1;
                }
            }
        }
        for own in [true, false] {
            let base = self.attack_count[own as usize] as usize * n;
            for (t, &k) in count[own as usize][..n].iter().enumerate() {
                for j in 0..(k as usize).min(3) {
                    out[base + j * n + t] = T::ONE;
                }
            }
        }
    }
}
