//! Input planes: what the network sees of a position, from the side to
//! move's view (the board turned for gote). See the README for the table.

use super::policy::ViewTable;
use super::EncoderOptions;
use crate::inference::planes::PlaneValue;
use rules::{Color, Kind, Piece, Position, RoyalRule, Square, Variant};

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
    /// Attack planes: by piece code, as for `piece`, and the first of the three count
    /// planes `[own as usize]`.
    attack: Option<Box<[[u16; 128]; 2]>>,
    attack_count: [u16; 2],
    /// `[gote as usize][dense square]`: the square's index in the mover's view.
    view_of_dense: [Vec<u8>; 2],
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
        let attack = options.attack_planes.then(|| {
            let table = piece_block(&mut planes, true);
            for own in [true, false] {
                attack_count[own as usize] = planes.len() as u16;
                for at_least in 1..=3 {
                    planes.push(InputPlane::AttackCount { own, at_least });
                }
            }
            table
        });
        // `Writer` notes planes in 256 bits.
        assert!(planes.len() <= 256, "{} input planes", planes.len());
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
            view_of_dense: view_of_dense(spec.size),
            gote_code,
            view: ViewTable::new(spec.size),
        }
    }

    /// Writes in the number type the planes travel in (f32, or the 16-bit type of the
    /// network's precision): the values are rounded once, as the device would round them.
    /// With a `footprint` of the encoding that last wrote `out`, only the values it set are
    /// cleared first (see [`Footprint`]); without, every value is.
    pub fn encode<T: PlaneValue>(&self, pos: &Position, out: &mut [T], footprint: Option<&mut Footprint>) {
        let n = self.size * self.size;
        assert_eq!(out.len(), self.planes.len() * n, "input buffer length");
        let mut w = Writer::new(out, n, footprint);
        let us = pos.side_to_move();
        let gote = us == Color::Gote;
        let table = &self.piece[us.index()];
        for (sq, p) in pos.pieces_by_dense() {
            let (c, r) = self.view.col_row(sq, gote);
            let v = r as usize * self.size + c as usize;
            let plane = table[p.code() as usize];
            debug_assert_ne!(plane, NONE, "piece {p:?} not in the variant");
            w.set(plane as usize * n + v);
        }
        if let Some(hand) = &self.hand {
            for (i, &kind) in Kind::HAND.iter().enumerate() {
                for (own, color) in [(true, us), (false, us.opponent())] {
                    let count = pos.hand(color, kind);
                    if count > 0 {
                        w.fill(hand[own as usize][i], (count as f32 / hand_max(kind) as f32).min(1.0));
                    }
                }
            }
        }
        if let Some(p) = self.repetition {
            let reps = pos.repetitions();
            if reps >= 1 {
                w.fill(p, 1.0);
            }
            if reps >= 2 {
                w.fill(p + 1, 1.0);
            }
        }
        if let Some(p) = self.in_check {
            if pos.in_check() {
                w.fill(p, 1.0);
            }
        }
        let plies = pos.move_number().saturating_sub(1) as f32;
        w.fill(self.progress, (plies / self.horizon).min(1.0));
        if gote {
            w.fill(self.colour, 1.0);
        }
        w.fill(self.ones, 1.0);
        if let Some(attack) = &self.attack {
            self.encode_attacks(&attack[us.index()], pos, gote, &mut w);
        }
        w.finish();
    }

    /// Attack planes: every square each piece attacks (pins and the check
    /// rule ignored; own pieces on the square count as defended), from the rules' attack
    /// sets; the count planes add them up by side, a bit set per count.
    fn encode_attacks<T: PlaneValue>(&self, table: &[u16; 128], pos: &Position, gote: bool, w: &mut Writer<'_, T>) {
        let n = self.size * self.size;
        let view = &self.view_of_dense[gote as usize];
        // Squares attacked at least once, twice, three times, by side (`own as usize`).
        let mut at_least = [[[0u64; 4]; 3]; 2];
        pos.for_each_attack_set(|_, code, set| {
            let own = self.gote_code[code as usize] == gote;
            let counts = &mut at_least[own as usize];
            for k in 0..4 {
                counts[2][k] |= counts[1][k] & set[k];
                counts[1][k] |= counts[0][k] & set[k];
                counts[0][k] |= set[k];
            }
            let plane = table[code as usize] as usize;
            for_each_bit(set, |i| w.set_in_plane(plane, plane * n + view[i] as usize));
        });
        for own in [true, false] {
            for (j, &set) in at_least[own as usize].iter().enumerate() {
                let plane = self.attack_count[own as usize] as usize + j;
                for_each_bit(set, |i| w.set_in_plane(plane, plane * n + view[i] as usize));
            }
        }
    }
}

/// Calls `f` with the index of every bit set in `words`.
#[inline]
fn for_each_bit(words: [u64; 4], mut f: impl FnMut(usize)) {
    for (k, mut word) in words.into_iter().enumerate() {
        while word != 0 {
            f(64 * k + word.trailing_zeros() as usize);
            word &= word - 1;
        }
    }
}

/// `[gote as usize][dense square]`: the square's index in the mover's view (turned for
/// gote), as the piece planes place it.
fn view_of_dense(size: usize) -> [Vec<u8>; 2] {
    let view = ViewTable::new(size);
    [false, true].map(|gote| {
        (0..size * size)
            .map(|i| {
                let (c, r) = view.col_row(Square::from_dense(i, size), gote);
                (r as usize * size + c as usize) as u8
            })
            .collect()
    })
}

/// What one encoding set in its planes: the values it made non-zero one by one (the
/// pieces) and the planes it wrote more of (filled whole, or the attack planes, where a
/// plane is cheaper to clear than its many values are to note). Clearing just those values leaves the planes all zero again,
/// which is cheaper than clearing every value: a batch's planes are far out of the cache
/// by the time its slot is written again, and most planes hold a handful of ones.
///
/// A footprint describes `out` only while nothing but encodings given this footprint write
/// there (a batcher slot's leaf `k`, kept by the worker that fills the slot; the worker
/// forgets its footprints when the slot's storage changes). A new footprint knows nothing:
/// the first encoding with it clears every value.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    /// Whether the lists below describe the values there now.
    known: bool,
    values: Vec<u32>,
    planes: Vec<u16>,
}

impl Footprint {
    /// The values there are no longer those of the last encoding (the storage changed).
    pub fn forget(&mut self) {
        self.known = false;
    }
}

/// Writes an encoding's values, clearing first what the last encoding left (all of it
/// without a footprint) and noting what it sets in the footprint.
struct Writer<'a, T> {
    out: &'a mut [T],
    n: usize,
    footprint: Option<&'a mut Footprint>,
    /// Planes written by [`Writer::set_in_plane`], as bits.
    touched: [u64; 4],
}

impl<'a, T: PlaneValue> Writer<'a, T> {
    fn new(out: &'a mut [T], n: usize, mut footprint: Option<&'a mut Footprint>) -> Writer<'a, T> {
        match footprint.as_deref_mut() {
            Some(f) if f.known => {
                for &i in &f.values {
                    out[i as usize] = T::ZERO;
                }
                for &p in &f.planes {
                    out[p as usize * n..(p as usize + 1) * n].fill(T::ZERO);
                }
            }
            _ => out.fill(T::ZERO),
        }
        if let Some(f) = footprint.as_deref_mut() {
            f.values.clear();
            f.planes.clear();
            f.known = true;
        }
        Writer { out, n, footprint, touched: [0; 4] }
    }

    /// Sets value `i`, in plane `plane`, to one; the plane is noted whole.
    #[inline]
    fn set_in_plane(&mut self, plane: usize, i: usize) {
        self.out[i] = T::ONE;
        self.touched[plane >> 6] |= 1 << (plane & 63);
    }

    /// Notes the planes that [`Writer::set_in_plane`] wrote.
    fn finish(self) {
        let Some(f) = self.footprint else { return };
        for (w, &bits) in self.touched.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                f.planes.push((w * 64 + bits.trailing_zeros() as usize) as u16);
                bits &= bits - 1;
            }
        }
    }

    /// Sets value `i` (zero until now) to one.
    #[inline]
    fn set(&mut self, i: usize) {
        self.out[i] = T::ONE;
        if let Some(f) = self.footprint.as_deref_mut() {
            f.values.push(i as u32);
        }
    }

    /// Fills plane `plane` with `value`.
    fn fill(&mut self, plane: u16, value: f32) {
        let p = plane as usize * self.n;
        self.out[p..p + self.n].fill(T::from_f32(value));
        if let Some(f) = self.footprint.as_deref_mut() {
            f.planes.push(plane);
        }
    }
}
