#![doc = include_str!("README.md")]

mod features;
mod policy;
pub mod sample;

pub use features::{hand_max, progress_horizon, Footprint, InputPlane};
pub use policy::{PolicyPlane, DIRS, DIR_NAMES, RAY_MAX};
pub use sample::{encode_sample, encode_sample_at, EncoderLabels};

use crate::inference::planes::Planes;
use crate::network::shape::NetShape;
use rules::{Move, Position, Variant};
use serde::{Deserialize, Serialize};

/// Version of the input planes and policy labels. Checkpoints record it;
/// bump it whenever the meaning or order of a plane changes.
pub const ENCODER_VERSION: u32 = 1;

/// Choices that change the input planes (recorded with the checkpoint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EncoderOptions {
    /// dlshogi-style attack planes: per side, the squares attacked by each
    /// (kind, promoted) and attacker-count planes (>= 1, 2, 3). Default
    /// false (dlshogi: on; AlphaZero: off).
    pub attack_planes: bool,
}

/// The bridge between positions of one variant and the network: input
/// planes, and a label for every legal move. Everything is seen from the
/// side to move: gote's board is turned half a circle, so the network
/// always moves "up" (towards row 0).
#[derive(Clone, Debug)]
pub struct Encoder {
    variant: Variant,
    size: usize,
    options: EncoderOptions,
    features: features::FeatureLayout,
    policy: policy::PolicyLayout,
}

impl Encoder {
    pub const VERSION: u32 = ENCODER_VERSION;

    /// The encoder of `variant` with default options.
    pub fn new(variant: Variant) -> Encoder {
        Encoder::with_options(variant, EncoderOptions::default())
    }

    pub fn with_options(variant: Variant, options: EncoderOptions) -> Encoder {
        Encoder {
            variant,
            size: variant.size(),
            options,
            features: features::FeatureLayout::new(variant, &options),
            policy: policy::PolicyLayout::new(variant),
        }
    }

    /// The encoder a network of this architecture reads (its input options): the one
    /// place an encoder is made from a [`crate::NetConfig`]. A loaded network carries its
    /// encoder ([`crate::Network`]); callers never rebuild one from a file's metadata.
    pub fn for_net(variant: Variant, net: &crate::NetConfig) -> Encoder {
        Encoder::with_options(variant, EncoderOptions { attack_planes: net.attack_planes })
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    pub fn options(&self) -> EncoderOptions {
        self.options
    }

    /// Board side (9 or 15); planes are `board_size x board_size`.
    pub fn board_size(&self) -> usize {
        self.size
    }

    /// Squares per plane.
    pub fn squares(&self) -> usize {
        self.size * self.size
    }

    pub fn input_planes(&self) -> usize {
        self.features.planes.len()
    }

    /// f32 values written by [`Encoder::encode`].
    pub fn input_len(&self) -> usize {
        self.input_planes() * self.squares()
    }

    pub fn policy_planes(&self) -> usize {
        self.policy.planes.len()
    }

    /// Number of policy labels: `policy_planes * squares`.
    pub fn policy_size(&self) -> usize {
        self.policy_planes() * self.squares()
    }

    /// The network shape this encoder feeds.
    pub fn net_shape(&self) -> NetShape {
        NetShape {
            input_planes: self.input_planes(),
            board_height: self.size,
            board_width: self.size,
            policy_planes: self.policy_planes(),
        }
    }

    /// What each input plane holds, in order.
    pub fn input_plane_info(&self) -> &[InputPlane] {
        &self.features.planes
    }

    /// What each policy plane labels, in order.
    pub fn policy_plane_info(&self) -> &[PolicyPlane] {
        &self.policy.planes
    }

    /// Writes the input planes of `pos` into `out` (`input_len()` values,
    /// `[plane][row][col]` in the mover's view; every value is written).
    ///
    /// Panics if `out` has the wrong length or `pos` is another variant.
    pub fn encode(&self, pos: &Position, out: &mut [f32]) {
        self.encode_planes(pos, Planes::F32(out));
    }

    /// [`Encoder::encode`] into planes of any [`crate::PlaneKind`] (a batcher slot's),
    /// clearing only what the last encoding there set when the target has its footprint.
    pub fn encode_planes<'a>(&self, pos: &Position, out: impl Into<EncodeTarget<'a>>) {
        assert_eq!(pos.variant(), self.variant, "position of another variant");
        let EncodeTarget { planes, footprint } = out.into();
        match planes {
            Planes::F32(s) => self.features.encode(pos, s, footprint),
            Planes::F16(s) => self.features.encode(pos, s, footprint),
            Planes::Bf16(s) => self.features.encode(pos, s, footprint),
        }
    }

    /// The label of a move of `pos` in `0..policy_size()`; `None` only for
    /// a move no legal move of the variant could be.
    #[inline]
    pub fn try_move_index(&self, pos: &Position, mv: Move) -> Option<usize> {
        self.policy.move_index(pos, mv)
    }

    /// The label of a legal move of `pos`.
    ///
    /// Panics for a move that no position of the variant could allow (use
    /// [`Encoder::try_move_index`] for unchecked input).
    #[inline]
    pub fn move_index(&self, pos: &Position, mv: Move) -> usize {
        self.policy.move_index(pos, mv).unwrap_or_else(|| panic!("{mv} has no policy label in {}", self.variant))
    }

    /// The legal move of `pos` with label `index`, if there is one.
    pub fn index_move(&self, pos: &Position, index: usize) -> Option<Move> {
        self.policy.index_move_among(pos, index, &pos.legal_moves())
    }

    /// Like [`Encoder::index_move`] with the legal moves already at hand.
    pub fn index_move_among(&self, pos: &Position, index: usize, legal: &[Move]) -> Option<Move> {
        self.policy.index_move_among(pos, index, legal)
    }

    /// The labels of the legal moves, in [`Position::legal_moves`] order.
    pub fn legal_move_indices(&self, pos: &Position) -> Vec<usize> {
        let (mut moves, mut indices) = (Vec::new(), Vec::new());
        self.legal_moves_indexed(pos, &mut moves, &mut indices);
        indices
    }

    /// Fills `moves` with the legal moves and `indices` with their labels
    /// (buffers are cleared first and reused).
    pub fn legal_moves_indexed(&self, pos: &Position, moves: &mut Vec<Move>, indices: &mut Vec<usize>) {
        pos.generate_legal(moves);
        indices.clear();
        indices.extend(moves.iter().map(|&m| self.move_index(pos, m)));
    }
}

/// Where an encoding goes: a position's planes, with the [`Footprint`] of the encoding
/// that wrote them last when the caller keeps one (a self-play worker, for its slots).
#[derive(Debug)]
pub struct EncodeTarget<'a> {
    pub planes: Planes<'a>,
    pub footprint: Option<&'a mut Footprint>,
}

impl EncodeTarget<'_> {
    /// A shorter-lived handle on the same target (to pass on and keep using `self`).
    pub fn reborrow(&mut self) -> EncodeTarget<'_> {
        EncodeTarget { planes: self.planes.reborrow(), footprint: self.footprint.as_deref_mut() }
    }
}

impl<'a> From<Planes<'a>> for EncodeTarget<'a> {
    fn from(planes: Planes<'a>) -> EncodeTarget<'a> {
        EncodeTarget { planes, footprint: None }
    }
}

impl<'a> From<&'a mut [f32]> for EncodeTarget<'a> {
    fn from(s: &'a mut [f32]) -> EncodeTarget<'a> {
        Planes::F32(s).into()
    }
}

impl<'a> From<&'a mut Vec<f32>> for EncodeTarget<'a> {
    fn from(s: &'a mut Vec<f32>) -> EncodeTarget<'a> {
        Planes::F32(s.as_mut_slice()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_counts() {
        let counts: Vec<_> = Variant::ALL
            .iter()
            .map(|&v| {
                let plain = Encoder::new(v);
                let attacks = Encoder::with_options(v, EncoderOptions { attack_planes: true });
                (plain.input_planes(), attacks.input_planes(), plain.policy_planes())
            })
            .collect();
        // Keep README.md in step with these numbers.
        assert_eq!(counts, vec![(48, 82, 27), (38, 76, 20), (113, 229, 123)]);
    }

    #[test]
    fn the_network_config_chooses_the_encoder() {
        for v in Variant::ALL {
            let with = crate::NetConfig { attack_planes: true, ..Default::default() };
            let attack = Encoder::for_net(v, &with);
            let plain = Encoder::for_net(v, &crate::NetConfig::default());
            assert!(attack.options().attack_planes && !plain.options().attack_planes);
            assert_ne!(attack.net_shape(), plain.net_shape(), "{v}");
        }
    }

    #[test]
    fn start_positions_label_every_move() {
        for v in Variant::ALL {
            let enc = Encoder::new(v);
            let pos = Position::startpos(v);
            let moves = pos.legal_moves();
            let idx = enc.legal_move_indices(&pos);
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), moves.len(), "{v}");
            for (&m, &i) in moves.iter().zip(&idx) {
                assert!(i < enc.policy_size());
                assert_eq!(enc.index_move(&pos, i), Some(m), "{v} {m}");
            }
        }
    }

    #[test]
    fn moves_off_the_board_have_no_label() {
        let enc = Encoder::new(Variant::Shogi);
        let pos = Position::startpos(Variant::Shogi);
        let (a, b) = (rules::Square::new(12, 1), rules::Square::new(12, 2));
        let mv = Move::Normal { from: a, to: b, promote: false };
        assert_eq!(enc.try_move_index(&pos, mv), None);
        let drop = Move::Drop { kind: rules::Kind::Pawn, to: rules::Square::new(5, 5) };
        assert_eq!(Encoder::new(Variant::Sho).try_move_index(&Position::startpos(Variant::Sho), drop), None);
    }

    #[test]
    fn gote_view_matches_sente_view_after_first_move() {
        // 7g7f for sente and 3c3d for gote are the same move in the mover's view.
        let enc = Encoder::new(Variant::Shogi);
        let mut pos = Position::startpos(Variant::Shogi);
        let a = enc.move_index(&pos, pos.parse_usi("7g7f").unwrap());
        pos.play_usi("2g2f").unwrap();
        let b = enc.move_index(&pos, pos.parse_usi("3c3d").unwrap());
        assert_eq!(a, b);
    }

    /// An encoding that clears only its footprint's values writes what a full clear
    /// writes: positions of random games (checks, hands, repetitions on the way) encoded
    /// one after another into the same planes, f32 and f16, with and without attack
    /// planes; and a footprint that forgets clears everything again.
    #[test]
    fn clearing_the_footprint_is_clearing_everything() {
        use half::f16;
        for v in Variant::ALL {
            for attack_planes in [false, true] {
                let enc = Encoder::with_options(v, EncoderOptions { attack_planes });
                let len = enc.input_len();
                let (mut reused, mut reused16) = (vec![0.0f32; len], vec![f16::ZERO; len]);
                let (mut fp, mut fp16) = (Footprint::default(), Footprint::default());
                for (ply, pos) in random_positions(v, 200).iter().enumerate() {
                    let mut fresh = vec![7.0f32; len];
                    enc.encode(pos, &mut fresh);
                    if ply % 50 == 0 {
                        // Someone else wrote there: the footprint no longer holds.
                        reused.fill(3.0);
                        fp.forget();
                    }
                    enc.encode_planes(pos, EncodeTarget { planes: Planes::F32(&mut reused), footprint: Some(&mut fp) });
                    assert_eq!(reused, fresh, "{v} attack planes {attack_planes}, ply {ply}: {}", pos.to_sfen());
                    enc.encode_planes(
                        pos,
                        EncodeTarget { planes: Planes::F16(&mut reused16), footprint: Some(&mut fp16) },
                    );
                    let fresh16: Vec<f16> = fresh.iter().map(|&x| f16::from_f32(x)).collect();
                    assert_eq!(reused16, fresh16, "{v} f16, ply {ply}");
                }
            }
        }
    }

    /// The attack planes hold what a plain walk of the variant's movement tables finds:
    /// each piece's legs from its square, a slider stopping at the first piece (which it
    /// defends or attacks), a jump landing on its one square; and the count planes the
    /// number of pieces of each side that reach a square (at least 1, 2, 3). Positions of
    /// random games in every variant.
    #[test]
    fn attack_planes_follow_the_movement_tables() {
        use rules::{Color, Square};
        for v in Variant::ALL {
            let enc = Encoder::with_options(v, EncoderOptions { attack_planes: true });
            let (size, n) = (v.spec().size as i32, enc.squares());
            let info = enc.input_plane_info();
            for pos in random_positions(v, 120) {
                let us = pos.side_to_move();
                let view = |d: usize| if us == Color::Gote { n - 1 - d } else { d };
                let mut want = vec![0.0f32; enc.input_len()];
                let mut counts = vec![[0u32; 2]; n];
                for (sq, p) in pos.pieces() {
                    let own = p.color() == us;
                    let ks = v.spec().kind(p.kind()).unwrap();
                    let movement = if p.is_promoted() { ks.promotion.unwrap().0 } else { ks.movement };
                    let plane = info
                        .iter()
                        .position(|x| *x == InputPlane::Attack { own, kind: p.kind(), promoted: p.is_promoted() })
                        .unwrap();
                    let sign = if p.color() == Color::Sente { 1 } else { -1 };
                    let (r0, c0) = ((sq.dense(size as usize) as i32) / size, (sq.dense(size as usize) as i32) % size);
                    for leg in movement.legs {
                        let steps = if leg.jump { 1 } else { leg.range as i32 };
                        for k in 1..=steps {
                            let (c, r) = (c0 + leg.dx as i32 * sign * k, r0 + leg.dy as i32 * sign * k);
                            if c < 0 || r < 0 || c >= size || r >= size {
                                break;
                            }
                            let d = (r * size + c) as usize;
                            want[plane * n + view(d)] = 1.0;
                            counts[d][own as usize] += 1;
                            if pos.piece_at(Square::from_dense(d, size as usize)).is_some() {
                                break;
                            }
                        }
                    }
                }
                for (plane, what) in info.iter().enumerate() {
                    if let InputPlane::AttackCount { own, at_least } = *what {
                        for (d, c) in counts.iter().enumerate() {
                            if c[own as usize] >= at_least as u32 {
                                want[plane * n + view(d)] = 1.0;
                            }
                        }
                    }
                }
                let mut got = vec![0.0f32; enc.input_len()];
                enc.encode(&pos, &mut got);
                for (plane, what) in info.iter().enumerate() {
                    if matches!(what, InputPlane::Attack { .. } | InputPlane::AttackCount { .. }) {
                        let range = plane * n..(plane + 1) * n;
                        assert_eq!(got[range.clone()], want[range], "{v}: plane {what} of {}", pos.to_sfen());
                    }
                }
            }
        }
    }

    /// Positions of random games in `variant` (a new game after each end), `plies` in all.
    fn random_positions(variant: Variant, plies: usize) -> Vec<Position> {
        let mut pos = Position::startpos(variant);
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut out = Vec::with_capacity(plies);
        while out.len() < plies {
            out.push(pos.clone());
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome(&Default::default()).is_some() {
                pos = Position::startpos(variant);
                continue;
            }
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos.play(moves[(seed >> 33) as usize % moves.len()]);
        }
        out
    }
}
