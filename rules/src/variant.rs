//! The three games as data: board size, piece kinds and how they move,
//! promotion, drops, royals and the start position. One move generator reads
//! these tables for every variant.

use crate::bitboard::{Geometries, Geometry, PerSquare, StepPattern, Zones};
use crate::types::{Color, Kind, Piece, Square, BOARD_LEN, CODES, DIRS, KIND_SLOTS, STRIDE};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// One of the games koma plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Standard shogi: 9x9, drops.
    Shogi,
    /// Sho shogi: 9x9, drunk elephant, no drops.
    Sho,
    /// Dai shogi: 15x15, 29 kinds, lion moves, no drops.
    Dai,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Shogi, Variant::Sho, Variant::Dai];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Shogi => "shogi",
            Variant::Sho => "sho",
            Variant::Dai => "dai",
        }
    }

    pub fn spec(self) -> &'static VariantSpec {
        match self {
            Variant::Shogi => &SHOGI,
            Variant::Sho => &SHO,
            Variant::Dai => &DAI,
        }
    }

    pub(crate) fn tables(self) -> &'static Tables {
        static TABLES: [OnceLock<Tables>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        TABLES[self as usize].get_or_init(|| Tables::build(self))
    }

    /// Board side length.
    pub fn size(self) -> usize {
        self.spec().size
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{}' (expected shogi, sho or dai)", crate::excerpt(.0))]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        match s.to_ascii_lowercase().as_str() {
            "shogi" | "standard" => Ok(Variant::Shogi),
            "sho" | "shoshogi" | "sho-shogi" => Ok(Variant::Sho),
            "dai" | "daishogi" | "dai-shogi" => Ok(Variant::Dai),
            _ => Err(UnknownVariant(s.to_string())),
        }
    }
}

/// How the royal pieces constrain play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoyalRule {
    /// A move may not leave the (only) king attacked; mate ends the game.
    Check,
    /// The check rule holds only while a side has a single royal; with two
    /// or more, royals may be left attacked and the game is won by capturing
    /// them all (sho shogi).
    CheckWhenSingleRoyal,
    /// No check rule: royals may be left attacked, the game is won by
    /// capturing every royal (dai shogi).
    CaptureAll,
}

/// When a move may promote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromotionRule {
    /// A move that starts or ends in the zone may promote (standard, sho).
    StartOrEnd,
    /// A non-capture may promote when it enters the zone from outside; a
    /// capture when it starts or ends in the zone (dai, as HaChu plays it).
    EnterOrCapture,
}

/// One movement primitive, from sente's point of view (`dy < 0` is forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leg {
    pub dx: i8,
    pub dy: i8,
    /// Squares it may travel along the line; `u8::MAX` for a slider. A jump
    /// has range 1 over its own (longer) offset.
    pub range: u8,
    /// Passes over intervening pieces.
    pub jump: bool,
}

const fn step(dx: i8, dy: i8) -> Leg {
    Leg { dx, dy, range: 1, jump: false }
}
const fn slide(dx: i8, dy: i8) -> Leg {
    Leg { dx, dy, range: u8::MAX, jump: false }
}
const fn range2(dx: i8, dy: i8) -> Leg {
    Leg { dx, dy, range: 2, jump: false }
}
const fn jump(dx: i8, dy: i8) -> Leg {
    Leg { dx, dy, range: 1, jump: true }
}

/// Lion power: two king steps in one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LionPower {
    None,
    /// Any two king steps (lion, promoted kirin).
    Full,
    /// Two steps along these lines only (horned falcon: forward; soaring
    /// eagle: diagonally forward); the second step goes on or comes back.
    Lines(&'static [(i8, i8)]),
}

/// How a piece moves.
#[derive(Clone, Copy, Debug)]
pub struct Movement {
    pub legs: &'static [Leg],
    pub lion: LionPower,
}

const fn plain(legs: &'static [Leg]) -> Movement {
    Movement { legs, lion: LionPower::None }
}

// Directions from sente's view: forward is dy = -1.
pub(crate) mod mv {
    use super::*;
    pub const KING: Movement =
        plain(&[step(0, -1), step(1, -1), step(-1, -1), step(1, 0), step(-1, 0), step(0, 1), step(1, 1), step(-1, 1)]);
    pub const GOLD: Movement = plain(&[step(0, -1), step(1, -1), step(-1, -1), step(1, 0), step(-1, 0), step(0, 1)]);
    pub const SILVER: Movement = plain(&[step(0, -1), step(1, -1), step(-1, -1), step(1, 1), step(-1, 1)]);
    pub const KNIGHT: Movement = plain(&[jump(1, -2), jump(-1, -2)]);
    pub const LANCE: Movement = plain(&[slide(0, -1)]);
    pub const PAWN: Movement = plain(&[step(0, -1)]);
    pub const ROOK: Movement = plain(&[slide(0, -1), slide(0, 1), slide(1, 0), slide(-1, 0)]);
    pub const BISHOP: Movement = plain(&[slide(1, -1), slide(-1, -1), slide(1, 1), slide(-1, 1)]);
    pub const DRAGON: Movement = plain(&[
        slide(0, -1),
        slide(0, 1),
        slide(1, 0),
        slide(-1, 0),
        step(1, -1),
        step(-1, -1),
        step(1, 1),
        step(-1, 1),
    ]);
    pub const HORSE: Movement = plain(&[
        slide(1, -1),
        slide(-1, -1),
        slide(1, 1),
        slide(-1, 1),
        step(0, -1),
        step(0, 1),
        step(1, 0),
        step(-1, 0),
    ]);
    pub const ELEPHANT: Movement =
        plain(&[step(0, -1), step(1, -1), step(-1, -1), step(1, 0), step(-1, 0), step(1, 1), step(-1, 1)]);
    // Dai shogi.
    pub const COPPER: Movement = plain(&[step(0, -1), step(1, -1), step(-1, -1), step(0, 1)]);
    pub const IRON: Movement = plain(&[step(0, -1), step(1, -1), step(-1, -1)]);
    pub const STONE: Movement = plain(&[step(1, -1), step(-1, -1)]);
    pub const GO_BETWEEN: Movement = plain(&[step(0, -1), step(0, 1)]);
    pub const BLIND_TIGER: Movement =
        plain(&[step(1, -1), step(-1, -1), step(1, 0), step(-1, 0), step(0, 1), step(1, 1), step(-1, 1)]);
    pub const FEROCIOUS_LEOPARD: Movement =
        plain(&[step(0, -1), step(1, -1), step(-1, -1), step(0, 1), step(1, 1), step(-1, 1)]);
    pub const CAT_SWORD: Movement = plain(&[step(1, -1), step(-1, -1), step(1, 1), step(-1, 1)]);
    pub const EVIL_WOLF: Movement = plain(&[step(0, -1), step(1, -1), step(-1, -1), step(1, 0), step(-1, 0)]);
    pub const ANGRY_BOAR: Movement = plain(&[step(0, -1), step(0, 1), step(1, 0), step(-1, 0)]);
    pub const FIERCE_OX: Movement = plain(&[range2(0, -1), range2(0, 1), range2(1, 0), range2(-1, 0)]);
    pub const FLYING_DRAGON: Movement = plain(&[range2(1, -1), range2(-1, -1), range2(1, 1), range2(-1, 1)]);
    pub const REVERSE_CHARIOT: Movement = plain(&[slide(0, -1), slide(0, 1)]);
    pub const VERTICAL_MOVER: Movement = plain(&[slide(0, -1), slide(0, 1), step(1, 0), step(-1, 0)]);
    pub const SIDE_MOVER: Movement = plain(&[slide(1, 0), slide(-1, 0), step(0, -1), step(0, 1)]);
    pub const PHOENIX: Movement =
        plain(&[step(0, -1), step(0, 1), step(1, 0), step(-1, 0), jump(2, -2), jump(-2, -2), jump(2, 2), jump(-2, 2)]);
    pub const KIRIN: Movement =
        plain(&[step(1, -1), step(-1, -1), step(1, 1), step(-1, 1), jump(0, -2), jump(0, 2), jump(2, 0), jump(-2, 0)]);
    pub const FREE_KING: Movement = plain(&[
        slide(0, -1),
        slide(1, -1),
        slide(-1, -1),
        slide(1, 0),
        slide(-1, 0),
        slide(0, 1),
        slide(1, 1),
        slide(-1, 1),
    ]);
    pub const LION: Movement = Movement {
        legs: &[
            step(0, -1),
            step(1, -1),
            step(-1, -1),
            step(1, 0),
            step(-1, 0),
            step(0, 1),
            step(1, 1),
            step(-1, 1),
            jump(-2, -2),
            jump(-1, -2),
            jump(0, -2),
            jump(1, -2),
            jump(2, -2),
            jump(-2, -1),
            jump(2, -1),
            jump(-2, 0),
            jump(2, 0),
            jump(-2, 1),
            jump(2, 1),
            jump(-2, 2),
            jump(-1, 2),
            jump(0, 2),
            jump(1, 2),
            jump(2, 2),
        ],
        lion: LionPower::Full,
    };
    pub const WHITE_HORSE: Movement = plain(&[slide(0, -1), slide(0, 1), slide(1, -1), slide(-1, -1)]);
    pub const FLYING_STAG: Movement = plain(&[
        slide(0, -1),
        slide(0, 1),
        step(1, -1),
        step(-1, -1),
        step(1, 0),
        step(-1, 0),
        step(1, 1),
        step(-1, 1),
    ]);
    pub const WHALE: Movement = plain(&[slide(0, -1), slide(0, 1), slide(1, 1), slide(-1, 1)]);
    pub const FLYING_OX: Movement =
        plain(&[slide(0, -1), slide(0, 1), slide(1, -1), slide(-1, -1), slide(1, 1), slide(-1, 1)]);
    pub const FREE_BOAR: Movement =
        plain(&[slide(1, 0), slide(-1, 0), slide(1, -1), slide(-1, -1), slide(1, 1), slide(-1, 1)]);
    pub const HORNED_FALCON: Movement = Movement {
        legs: &[
            step(0, -1),
            jump(0, -2),
            slide(0, 1),
            slide(1, 0),
            slide(-1, 0),
            slide(1, -1),
            slide(-1, -1),
            slide(1, 1),
            slide(-1, 1),
        ],
        lion: LionPower::Lines(&[(0, -1)]),
    };
    pub const SOARING_EAGLE: Movement = Movement {
        legs: &[
            step(1, -1),
            jump(2, -2),
            step(-1, -1),
            jump(-2, -2),
            slide(0, -1),
            slide(0, 1),
            slide(1, 0),
            slide(-1, 0),
            slide(1, 1),
            slide(-1, 1),
        ],
        lion: LionPower::Lines(&[(1, -1), (-1, -1)]),
    };
}

/// A piece kind as a variant uses it.
#[derive(Clone, Copy, Debug)]
pub struct KindSpec {
    pub kind: Kind,
    /// SFEN letters for sente (gote in lower case); `+` prefixes promoted.
    /// Always [`Kind::code`].
    pub code: &'static str,
    pub name: &'static str,
    pub movement: Movement,
    /// What the promoted piece moves like and is called, if it promotes.
    pub promotion: Option<(Movement, &'static str)>,
    pub royal: bool,
    pub promoted_royal: bool,
    /// Ranks at the far end where the unpromoted piece could never move
    /// again (pawn/lance 1, knight 2): it must promote there and may not be
    /// dropped there.
    pub dead_ranks: u8,
    /// Impasse points (standard shogi): rook/bishop 5, others 1, king 0.
    pub points: u8,
}

/// A game as data.
#[derive(Debug)]
pub struct VariantSpec {
    pub variant: Variant,
    pub size: usize,
    pub zone_depth: usize,
    pub drops: bool,
    pub royal_rule: RoyalRule,
    pub promotion_rule: PromotionRule,
    /// Capturing every non-royal enemy piece wins (sho, dai).
    pub bare_king_wins: bool,
    /// A move that repeats an earlier position is illegal (dai, HaChu's
    /// default); elsewhere the fourth occurrence ends the game.
    pub repetition_illegal: bool,
    pub kinds: &'static [KindSpec],
    pub start_sfen: &'static str,
}

const fn kind(
    kind: Kind,
    name: &'static str,
    movement: Movement,
    promotion: Option<(Movement, &'static str)>,
) -> KindSpec {
    KindSpec {
        kind,
        code: kind.code(),
        name,
        movement,
        promotion,
        royal: false,
        promoted_royal: false,
        dead_ranks: 0,
        points: 1,
    }
}

const fn dead(mut k: KindSpec, ranks: u8) -> KindSpec {
    k.dead_ranks = ranks;
    k
}
const fn points(mut k: KindSpec, p: u8) -> KindSpec {
    k.points = p;
    k
}
const fn royal(mut k: KindSpec) -> KindSpec {
    k.royal = true;
    k.points = 0;
    k
}
const fn promotes_royal(mut k: KindSpec) -> KindSpec {
    k.promoted_royal = true;
    k
}

use mv::*;

const SHOGI_KINDS: [KindSpec; 8] = [
    royal(kind(Kind::King, "king", KING, None)),
    points(kind(Kind::Rook, "rook", ROOK, Some((DRAGON, "dragon"))), 5),
    points(kind(Kind::Bishop, "bishop", BISHOP, Some((HORSE, "horse"))), 5),
    kind(Kind::Gold, "gold", GOLD, None),
    kind(Kind::Silver, "silver", SILVER, Some((GOLD, "promoted silver"))),
    dead(kind(Kind::Knight, "knight", KNIGHT, Some((GOLD, "promoted knight"))), 2),
    dead(kind(Kind::Lance, "lance", LANCE, Some((GOLD, "promoted lance"))), 1),
    dead(kind(Kind::Pawn, "pawn", PAWN, Some((GOLD, "tokin"))), 1),
];

const SHO_KINDS: [KindSpec; 9] = [
    SHOGI_KINDS[0],
    SHOGI_KINDS[1],
    SHOGI_KINDS[2],
    SHOGI_KINDS[3],
    SHOGI_KINDS[4],
    SHOGI_KINDS[5],
    SHOGI_KINDS[6],
    SHOGI_KINDS[7],
    promotes_royal(kind(Kind::Elephant, "drunk elephant", ELEPHANT, Some((KING, "crown prince")))),
];

static SHOGI: VariantSpec = VariantSpec {
    variant: Variant::Shogi,
    size: 9,
    zone_depth: 3,
    drops: true,
    royal_rule: RoyalRule::Check,
    promotion_rule: PromotionRule::StartOrEnd,
    bare_king_wins: false,
    repetition_illegal: false,
    kinds: &SHOGI_KINDS,
    start_sfen: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
};

static SHO: VariantSpec = VariantSpec {
    variant: Variant::Sho,
    size: 9,
    zone_depth: 3,
    drops: false,
    royal_rule: RoyalRule::CheckWhenSingleRoyal,
    promotion_rule: PromotionRule::StartOrEnd,
    bare_king_wins: true,
    repetition_illegal: false,
    kinds: &SHO_KINDS,
    start_sfen: "lnsgkgsnl/1r2e2b1/ppppppppp/9/9/9/PPPPPPPPP/1B2E2R1/LNSGKGSNL b - 1",
};

/// Dai shogi: the piece codes ([`Kind::code`]) are documented in the README;
/// one or two letters, two-letter codes written in brackets inside SFEN boards.
static DAI_KINDS: [KindSpec; 29] = [
    royal(kind(Kind::King, "king", KING, None)),
    kind(Kind::Rook, "rook", ROOK, Some((DRAGON, "dragon king"))),
    kind(Kind::Bishop, "bishop", BISHOP, Some((HORSE, "dragon horse"))),
    kind(Kind::Gold, "gold general", GOLD, Some((ROOK, "rook"))),
    kind(Kind::Silver, "silver general", SILVER, Some((VERTICAL_MOVER, "vertical mover"))),
    dead(kind(Kind::Knight, "knight", KNIGHT, Some((GOLD, "gold general"))), 2),
    dead(kind(Kind::Lance, "lance", LANCE, Some((WHITE_HORSE, "white horse"))), 1),
    dead(kind(Kind::Pawn, "pawn", PAWN, Some((GOLD, "gold general"))), 1),
    promotes_royal(kind(Kind::Elephant, "drunk elephant", ELEPHANT, Some((KING, "crown prince")))),
    kind(Kind::Copper, "copper general", COPPER, Some((SIDE_MOVER, "side mover"))),
    dead(kind(Kind::Iron, "iron general", IRON, Some((GOLD, "gold general"))), 1),
    dead(kind(Kind::Stone, "stone general", STONE, Some((GOLD, "gold general"))), 1),
    kind(Kind::GoBetween, "go-between", GO_BETWEEN, Some((ELEPHANT, "drunk elephant"))),
    kind(Kind::BlindTiger, "blind tiger", BLIND_TIGER, Some((FLYING_STAG, "flying stag"))),
    kind(Kind::FerociousLeopard, "ferocious leopard", FEROCIOUS_LEOPARD, Some((BISHOP, "bishop"))),
    kind(Kind::CatSword, "cat sword", CAT_SWORD, Some((GOLD, "gold general"))),
    kind(Kind::EvilWolf, "evil wolf", EVIL_WOLF, Some((GOLD, "gold general"))),
    kind(Kind::AngryBoar, "angry boar", ANGRY_BOAR, Some((GOLD, "gold general"))),
    kind(Kind::FierceOx, "fierce ox", FIERCE_OX, Some((GOLD, "gold general"))),
    kind(Kind::FlyingDragon, "flying dragon", FLYING_DRAGON, Some((GOLD, "gold general"))),
    kind(Kind::ReverseChariot, "reverse chariot", REVERSE_CHARIOT, Some((WHALE, "whale"))),
    kind(Kind::VerticalMover, "vertical mover", VERTICAL_MOVER, Some((FLYING_OX, "flying ox"))),
    kind(Kind::SideMover, "side mover", SIDE_MOVER, Some((FREE_BOAR, "free boar"))),
    kind(Kind::DragonHorse, "dragon horse", HORSE, Some((HORNED_FALCON, "horned falcon"))),
    kind(Kind::DragonKing, "dragon king", DRAGON, Some((SOARING_EAGLE, "soaring eagle"))),
    kind(Kind::Phoenix, "phoenix", PHOENIX, Some((FREE_KING, "free king"))),
    kind(Kind::Kirin, "kirin", KIRIN, Some((LION, "lion"))),
    kind(Kind::FreeKing, "free king", FREE_KING, None),
    kind(Kind::Lion, "lion", LION, None),
];

static DAI: VariantSpec = VariantSpec {
    variant: Variant::Dai,
    size: 15,
    zone_depth: 5,
    drops: false,
    royal_rule: RoyalRule::CaptureAll,
    promotion_rule: PromotionRule::EnterOrCapture,
    bare_king_wins: true,
    repetition_illegal: true,
    kinds: &DAI_KINDS,
    start_sfen: "ln[st]icsgkgsci[st]nl/[rc]1[cs]1[fl]1tet1[fl]1[cs]1[rc]/1o1[ab]1[ew]f[ln][kr][ew]1[ab]1o1/r[fd][sm][vm]bhd[fk]dhb[vm][sm][fd]r/ppppppppppppppp/4[gb]5[gb]4/15/15/15/4[GB]5[GB]4/PPPPPPPPPPPPPPP/R[FD][SM][VM]BHD[FK]DHB[VM][SM][FD]R/1O1[AB]1[EW][KR][LN]F[EW]1[AB]1O1/[RC]1[CS]1[FL]1TET1[FL]1[CS]1[RC]/LN[ST]ICSGKGSCI[ST]NL b - 1",
};

#[inline]
pub(crate) fn mailbox_offset(dx: i8, dy: i8) -> i16 {
    // dx > 0 goes towards sente's left, i.e. higher file numbers, i.e.
    // higher columns: the mailbox is laid out with column = file - 1.
    dy as i16 * STRIDE as i16 + dx as i16
}

pub(crate) fn dir_index(dx: i8, dy: i8) -> Option<u8> {
    DIRS.iter().position(|&d| d == (dx, dy)).map(|i| i as u8)
}

/// How the pieces of one code move, compiled for the bit-set generator
/// (directions already turned for gote).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CodeMoves {
    /// Slot of its step and jump targets in [`Geometry::steps`].
    pub steps: u16,
    /// Directions (bits of [`DIRS`] indices) it slides along without limit.
    pub slides: u8,
    /// Directions of its range-2 legs.
    pub near: u8,
    /// Dead ranks of the unpromoted piece (see [`KindSpec::dead_ranks`]).
    pub dead: u8,
    /// Unpromoted and promotable: its moves may offer a promotion.
    pub promotes: bool,
    /// Promoting makes it royal (the drunk elephant).
    pub promotes_to_royal: bool,
    /// Has lion power (double moves).
    pub lion: bool,
    /// Moves along lines (slides or range-2 legs): can attack from afar.
    pub ray: bool,
}

/// Per-variant tables indexed by piece code, built once.
pub(crate) struct Tables {
    pub spec: &'static VariantSpec,
    /// Movement per piece code.
    pub moves: [CodeMoves; 256],
    /// Lion power per code.
    pub lion: Vec<LionPower>,
    pub kind_spec: [Option<&'static KindSpec>; KIND_SLOTS],
    pub royal_code: [bool; CODES],
    /// `attack_step[c][d]`: codes of colour `c` that attack a square from
    /// the adjacent square in direction `d` (seen from the attacked square).
    pub attack_step: [[u128; 8]; 2],
    /// Codes of colour `c` that slide without limit back along direction `d`.
    pub attack_slide: [[u128; 8]; 2],
    /// Codes of colour `c` with range exactly 2 along direction `d`.
    pub attack_range2: [[u128; 8]; 2],
    /// Jump attacks: (offset from the attacked square, codes) per colour.
    pub attack_jump: [Vec<(i16, u128)>; 2],
    /// Mailbox cell of each dense square index (`row * size + col`).
    pub square_of_dense: PerSquare<Square>,
    /// Dense index of each mailbox cell (0 off the board).
    dense_of: Box<[u16; BOARD_LEN]>,
    /// Bit-set geometry in the width the board needs.
    pub geometry: Geometries,
}

/// Is `code` in the set of codes `mask`? `WALL` (0xFF) never is: bit 127
/// is no piece's code.
#[inline(always)]
pub(crate) fn has(mask: u128, code: u8) -> bool {
    // One 64-bit word and shift: a u128 shift by a variable costs more.
    let word = if code & 64 != 0 { (mask >> 64) as u64 } else { mask as u64 };
    (word >> (code & 63)) & 1 != 0
}

/// Attack masks by code, seen from the attacked square.
struct Attacks {
    step: [[u128; 8]; 2],
    slide: [[u128; 8]; 2],
    range2: [[u128; 8]; 2],
    jump: [Vec<(i16, u128)>; 2],
}

impl Attacks {
    fn new() -> Attacks {
        Attacks { step: [[0; 8]; 2], slide: [[0; 8]; 2], range2: [[0; 8]; 2], jump: [Vec::new(), Vec::new()] }
    }

    /// Records that `code` of colour `c` attacks along `leg` (turned for its colour).
    fn add(&mut self, c: usize, code: u8, leg: &Leg, (dx, dy): (i8, i8)) {
        let bit = 1u128 << code;
        if leg.jump {
            // Seen from the attacked square the attacker sits at -offset.
            let off = -mailbox_offset(dx, dy);
            match self.jump[c].iter_mut().find(|(o, _)| *o == off) {
                Some((_, m)) => *m |= bit,
                None => self.jump[c].push((off, bit)),
            }
            return;
        }
        // The attacker sits in direction -d from the target.
        let back = dir_index(-dx, -dy).expect("unit direction") as usize;
        self.step[c][back] |= bit;
        if leg.range == u8::MAX {
            self.slide[c][back] |= bit;
        } else if leg.range == 2 {
            self.range2[c][back] |= bit;
        }
    }
}

/// Compiles the legs of one code: slide and range-2 directions into
/// `moves`, steps and jumps into a pattern (deduplicated into `patterns`).
fn compile_legs(legs: &[Leg], sign: i8, moves: &mut CodeMoves, patterns: &mut Vec<StepPattern>) {
    let mut pattern = StepPattern::new();
    for leg in legs {
        let (dx, dy) = (leg.dx * sign, leg.dy * sign);
        match leg.range {
            1 => pattern.push((dx, dy)),
            2 => moves.near |= 1 << dir_index(dx, dy).expect("range-2 legs are unit steps"),
            u8::MAX => moves.slides |= 1 << dir_index(dx, dy).expect("slides are unit steps"),
            r => panic!("legs of range {r} are not supported"),
        }
    }
    pattern.sort_unstable();
    moves.steps = match patterns.iter().position(|p| *p == pattern) {
        Some(slot) => slot as u16,
        None => {
            patterns.push(pattern);
            (patterns.len() - 1) as u16
        }
    };
}

impl Tables {
    /// The dense index (`row * size + col`) of a board square.
    #[inline(always)]
    pub fn dense(&self, sq: Square) -> usize {
        self.dense_of[sq.index() & (BOARD_LEN - 1)] as usize
    }

    fn build(variant: Variant) -> Tables {
        let spec = variant.spec();
        let mut kind_spec = [None; KIND_SLOTS];
        for k in spec.kinds {
            kind_spec[k.kind as usize] = Some(k);
        }
        let mut moves = [CodeMoves::default(); 256];
        // Slot 0 is the empty pattern (pure sliders).
        let mut patterns: Vec<StepPattern> = vec![Vec::new()];
        let mut lion = vec![LionPower::None; CODES];
        let mut royal_code = [false; CODES];
        let mut attacks = Attacks::new();
        for k in spec.kinds {
            for promoted in [false, true] {
                let movement = match (promoted, k.promotion) {
                    (false, _) => k.movement,
                    (true, Some((m, _))) => m,
                    (true, None) => continue,
                };
                for color in Color::BOTH {
                    let code = Piece::new(color, k.kind, promoted).code();
                    royal_code[code as usize] = if promoted { k.promoted_royal } else { k.royal };
                    let sign: i8 = if color == Color::Sente { 1 } else { -1 };
                    lion[code as usize] = movement.lion;
                    let m = &mut moves[code as usize];
                    compile_legs(movement.legs, sign, m, &mut patterns);
                    m.lion = movement.lion != LionPower::None;
                    m.ray = m.slides != 0 || m.near != 0;
                    if !promoted {
                        m.dead = k.dead_ranks;
                        m.promotes = k.promotion.is_some();
                        m.promotes_to_royal = k.promoted_royal && !k.royal;
                    }
                    for leg in movement.legs {
                        attacks.add(color.index(), code, leg, (leg.dx * sign, leg.dy * sign));
                    }
                }
            }
        }
        let size = spec.size;
        let square_of_dense = PerSquare::new(size * size, Square::default(), |i| Square::from_dense(i, size));
        let mut dense_of = Box::new([0u16; BOARD_LEN]);
        for i in 0..size * size {
            dense_of[square_of_dense[i].index()] = i as u16;
        }
        let zones = Zones {
            in_zone: &|c, row| spec.in_zone(c, row),
            rows_ahead: &|c, row| spec.rows_ahead(c, row),
            captures_promote_inside: spec.promotion_rule == PromotionRule::EnterOrCapture,
        };
        let (narrow, wide) = if size * size <= 128 {
            (Some(Geometry::build(size, &patterns, &zones)), None)
        } else {
            (None, Some(Geometry::build(size, &patterns, &zones)))
        };
        Tables {
            square_of_dense,
            dense_of,
            spec,
            moves,
            lion,
            kind_spec,
            royal_code,
            attack_step: attacks.step,
            attack_slide: attacks.slide,
            attack_range2: attacks.range2,
            attack_jump: attacks.jump,
            geometry: Geometries { narrow, wide },
        }
    }
}

impl VariantSpec {
    pub fn kind(&self, kind: Kind) -> Option<&'static KindSpec> {
        self.variant.tables().kind_spec[kind as usize]
    }

    /// Does a piece of this colour on this row stand in its promotion zone?
    #[inline]
    pub fn in_zone(&self, color: Color, row: usize) -> bool {
        match color {
            Color::Sente => row < self.zone_depth,
            Color::Gote => row >= self.size - self.zone_depth,
        }
    }

    /// Rows left ahead of a piece of `color` on `row` (0 on the last rank).
    #[inline]
    pub fn rows_ahead(&self, color: Color, row: usize) -> usize {
        match color {
            Color::Sente => row,
            Color::Gote => self.size - 1 - row,
        }
    }
}
