//! Encoder properties on random positions of every variant: distinct labels
//! that round-trip for every legal move, the same planes and labels for a
//! position and its colour-flipped mirror, plane sums, determinism.
//! `cargo test -p koma-model --test encoding -- --ignored --nocapture`
//! prints encode speed.

use koma_model::encoding::{Encoder, EncoderOptions, InputPlane, PolicyPlane};
use proptest::prelude::*;
use rules::{Color, Move, Position, Setup, Square, Variant};
use std::collections::HashSet;

mod common;
use common::Rng;

/// A side lost all its royals (sho, dai): the game is over, not a position.
fn royal_lost(pos: &Position) -> bool {
    pos.royals(Color::Sente).is_empty() || pos.royals(Color::Gote).is_empty()
}

/// Plays up to `plies` random moves from the start, calling `check` on
/// every position reached (the start included).
fn playout(variant: Variant, seed: u64, plies: usize, mut check: impl FnMut(&Position, &[Move])) {
    let mut rng = Rng(seed);
    let mut pos = Position::startpos(variant);
    for _ in 0..=plies {
        if royal_lost(&pos) {
            break;
        }
        let legal = pos.legal_moves();
        check(&pos, &legal);
        if legal.is_empty() {
            break;
        }
        pos.play(legal[rng.below(legal.len())]);
    }
}

/// The same position with the board turned, colours swapped and the other
/// side to move (no history).
fn mirror(pos: &Position) -> Position {
    let mut s = Setup::parse(pos.variant(), &pos.to_sfen()).unwrap();
    s.board.reverse();
    for p in s.board.iter_mut().flatten() {
        *p = p.with_color(p.color().opponent());
    }
    s.hands.swap(0, 1);
    s.side = s.side.opponent();
    Position::from_setup(s).unwrap()
}

fn mirror_move(mv: Move, size: usize) -> Move {
    let f = |s: Square| s.flip(size);
    match mv {
        Move::Normal { from, to, promote } => Move::Normal { from: f(from), to: f(to), promote },
        Move::Drop { kind, to } => Move::Drop { kind, to: f(to) },
        Move::Lion { from, mid, to } => Move::Lion { from: f(from), mid: f(mid), to: f(to) },
    }
}

fn is_pass(pos: &Position, mv: Move) -> bool {
    matches!(mv, Move::Lion { from, mid, to } if from == to && pos.piece_at(mid).is_none())
}

/// Every property, on one position.
fn check_position(enc: &Encoder, pos: &Position, legal: &[Move], rng: &mut Rng) {
    let n = enc.squares();
    let size = enc.board_size();

    // Labels: in range, distinct, round trip.
    let mut moves = Vec::new();
    let mut indices = Vec::new();
    enc.legal_moves_indexed(pos, &mut moves, &mut indices);
    assert_eq!(moves, legal);
    let mut seen = HashSet::new();
    for (&m, &i) in legal.iter().zip(&indices) {
        assert!(i < enc.policy_size(), "{m} -> {i} in {pos:?}");
        assert_eq!(enc.move_index(pos, m), i);
        assert!(seen.insert(i), "two moves labelled {i} (one is {m}) in {pos:?}");
        assert_eq!(enc.index_move_among(pos, i, legal), Some(m), "{m} -> {i} in {pos:?}");
    }
    // Labels of no legal move decode to nothing.
    for _ in 0..16 {
        let i = rng.below(enc.policy_size());
        match enc.index_move_among(pos, i, legal) {
            Some(m) => assert!(seen.contains(&i) && enc.move_index(pos, m) == i),
            None => assert!(!seen.contains(&i), "label {i} of a legal move not decoded in {pos:?}"),
        }
    }

    // Encoding: every value written, deterministic.
    let mut a = vec![f32::NAN; enc.input_len()];
    let mut b = vec![7.0; enc.input_len()];
    enc.encode(pos, &mut a);
    enc.encode(pos, &mut b);
    assert!(a.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
    assert_eq!(a, b);

    // Piece planes: one plane per occupied square, sums match the board.
    let us = pos.side_to_move();
    let info = enc.input_plane_info();
    let (mut own, mut theirs) = (0.0f32, 0.0f32);
    let mut per_square = vec![0.0f32; n];
    for (p, plane) in info.iter().enumerate() {
        if let InputPlane::Piece { own: o, .. } = plane {
            let vals = &a[p * n..(p + 1) * n];
            let sum: f32 = vals.iter().sum();
            if *o {
                own += sum;
            } else {
                theirs += sum;
            }
            for (s, v) in per_square.iter_mut().zip(vals) {
                *s += v;
            }
        }
        if let InputPlane::Hand { own: o, kind } = *plane {
            let color = if o { us } else { us.opponent() };
            let want = pos.hand(color, kind) as f32 / koma_model::encoding::hand_max(kind) as f32;
            assert!(a[p * n..(p + 1) * n].iter().all(|&v| v == want));
        }
    }
    let count = |c: Color| pos.pieces().filter(|(_, p)| p.color() == c).count() as f32;
    assert_eq!((own, theirs), (count(us), count(us.opponent())));
    assert_eq!(per_square.iter().filter(|&&v| v == 1.0).count() as f32, own + theirs);
    assert!(per_square.iter().all(|&v| v == 0.0 || v == 1.0));
    // Where a piece stands, in the mover's view.
    for (sq, p) in pos.pieces() {
        let v = if us == Color::Gote { sq.flip(size) } else { sq }.dense(size);
        let plane = info
            .iter()
            .position(|x| *x == InputPlane::Piece { own: p.color() == us, kind: p.kind(), promoted: p.is_promoted() })
            .unwrap();
        assert_eq!(a[plane * n + v], 1.0);
    }

    // Attack planes: "attacked by at least one piece" is the rules' own attack test, for
    // either side (checked where every piece moves by legs, as the planes read them).
    if enc.options().attack_planes && pos.variant() != Variant::Dai {
        for own_side in [true, false] {
            let color = if own_side { us } else { us.opponent() };
            let plane = info.iter().position(|x| *x == InputPlane::AttackCount { own: own_side, at_least: 1 }).unwrap();
            for file in 1..=size as u8 {
                for rank in 1..=size as u8 {
                    let sq = Square::new(file, rank);
                    let v = if us == Color::Gote { sq.flip(size) } else { sq }.dense(size);
                    assert_eq!(
                        a[plane * n + v] == 1.0,
                        pos.attacked(sq, color),
                        "{sq:?} attacked by {color:?} in {pos:?}"
                    );
                }
            }
        }
    }

    // The mirror: same planes except colour (and history, which it lacks),
    // same labels for the mirrored moves.
    let m = mirror(pos);
    let mut c = vec![0.0; enc.input_len()];
    enc.encode(&m, &mut c);
    for (p, plane) in info.iter().enumerate() {
        let (x, y) = (&a[p * n..(p + 1) * n], &c[p * n..(p + 1) * n]);
        match plane {
            InputPlane::Colour => assert!(x.iter().zip(y).all(|(u, v)| u + v == 1.0)),
            InputPlane::Repetition { .. } => assert!(y.iter().all(|&v| v == 0.0)),
            _ => assert_eq!(x, y, "plane {plane} differs in the mirror of {pos:?}"),
        }
    }
    let mirror_legal = m.legal_moves();
    for (&mv, &i) in legal.iter().zip(&indices) {
        let mm = mirror_move(mv, size);
        if !is_pass(pos, mv) {
            // The mirror has no history: dai's repetition ban may allow it more.
            assert!(mirror_legal.contains(&mm), "{mm} not legal in the mirror {m:?}");
        }
        assert_eq!(enc.move_index(&m, mm), i, "{mv} in {pos:?} vs {mm} in {m:?}");
    }
}

fn cases(variant: Variant) -> (u32, usize) {
    match variant {
        Variant::Shogi | Variant::Sho => (96, 300),
        Variant::Dai => (24, 250),
    }
}

fn run(variant: Variant, seed: u64, plies: usize, options: EncoderOptions) {
    let enc = Encoder::with_options(variant, options);
    let mut rng = Rng(seed ^ 0x5EED);
    playout(variant, seed, plies, |pos, legal| check_position(&enc, pos, legal, &mut rng));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(Variant::Shogi).0, ..ProptestConfig::default() })]
    #[test]
    fn shogi_positions(seed in any::<u64>(), plies in 0..=cases(Variant::Shogi).1, attacks in any::<bool>()) {
        run(Variant::Shogi, seed, plies, EncoderOptions { attack_planes: attacks });
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(Variant::Sho).0, ..ProptestConfig::default() })]
    #[test]
    fn sho_positions(seed in any::<u64>(), plies in 0..=cases(Variant::Sho).1, attacks in any::<bool>()) {
        run(Variant::Sho, seed, plies, EncoderOptions { attack_planes: attacks });
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(Variant::Dai).0, ..ProptestConfig::default() })]
    #[test]
    fn dai_positions(seed in any::<u64>(), plies in 0..=cases(Variant::Dai).1, attacks in any::<bool>()) {
        run(Variant::Dai, seed, plies, EncoderOptions { attack_planes: attacks });
    }
}

/// Random playouts reach every kind of label the variant has (so the
/// property tests above exercise them): promotions, drops, knights,
/// lion double moves, igui and the pass.
#[test]
fn playouts_cover_every_label_kind() {
    for variant in Variant::ALL {
        let enc = Encoder::new(variant);
        let planes = enc.policy_plane_info();
        let mut hit = vec![false; planes.len()];
        let mut igui = false;
        for seed in 0..if variant == Variant::Dai { 6 } else { 40 } {
            playout(variant, seed, 300, |pos, legal| {
                for &m in legal {
                    hit[enc.move_index(pos, m) / enc.squares()] = true;
                    igui |= matches!(m, Move::Lion { from, to, mid } if from == to && pos.piece_at(mid).is_some());
                }
            });
        }
        let kind = |p: &PolicyPlane| match p {
            PolicyPlane::Ray { promote, .. } | PolicyPlane::Offset { promote, .. } => {
                if *promote {
                    "promotion"
                } else {
                    "board move"
                }
            }
            PolicyPlane::Drop { .. } => "drop",
            PolicyPlane::Lion { .. } => "lion",
            PolicyPlane::Pass => "pass",
        };
        let wanted: HashSet<_> = planes.iter().map(kind).collect();
        let reached: HashSet<_> = planes.iter().zip(&hit).filter(|(_, &h)| h).map(|(p, _)| kind(p)).collect();
        assert_eq!(reached, wanted, "{variant}");
        assert_eq!(igui, variant == Variant::Dai, "{variant}: igui");
        let used = hit.iter().filter(|&&h| h).count();
        eprintln!("{variant}: {used} of {} policy planes used by legal moves of random playouts", planes.len());
    }
}

/// Hand-made dai positions: lion jumps, double moves, igui and the pass get
/// distinct labels, and the pass label does not depend on which lion the
/// move generator passed with.
#[test]
fn dai_lion_moves() {
    let enc = Encoder::new(Variant::Dai);
    // Sente lion on 8h with a gote pawn on 8g in front and a sente kirin-lion
    // (promoted kirin) on 3h; kings far apart.
    let sfen = "7k7/15/15/15/15/15/7p7/7[LN]4+[KR]2/15/15/15/15/15/15/7K7 b - 1";
    let pos = Position::from_sfen(Variant::Dai, sfen).unwrap();
    let legal = pos.legal_moves();
    let idx = enc.legal_move_indices(&pos);
    let distinct: HashSet<_> = idx.iter().collect();
    assert_eq!(distinct.len(), legal.len());
    let find = |usi: &str| legal.iter().copied().find(|m| m.to_usi() == usi);
    let igui = find("8h8g8h").expect("igui is legal");
    let double = find("8h8g8f").expect("capture and go on");
    let jump = find("8h8f").expect("jump over the pawn");
    let labels: HashSet<_> = [igui, double, jump].iter().map(|&m| enc.move_index(&pos, m)).collect();
    assert_eq!(labels.len(), 3);
    let pass = legal.iter().copied().find(|&m| is_pass(&pos, m)).expect("a pass");
    let pass_label = enc.move_index(&pos, pass);
    // Any lion-power piece passing over any empty square gets the same label.
    for (from, mid) in [("3h", "3g"), ("8h", "9h"), ("8h", "7i")] {
        let text = format!("{from}{mid}{from}");
        let other = match rules::UsiMove::parse(&text).unwrap() {
            rules::UsiMove::Lion { from, mid, to } => Move::Lion { from, mid, to },
            _ => unreachable!(),
        };
        assert_eq!(enc.move_index(&pos, other), pass_label, "{text}");
    }
    assert_eq!(enc.index_move(&pos, pass_label), Some(pass));
}

/// Encode speed per variant (run with --ignored --nocapture).
#[test]
#[ignore]
fn encode_speed() {
    use std::time::Instant;
    for variant in Variant::ALL {
        let mut positions = Vec::new();
        for seed in 0..20 {
            playout(variant, seed, 120, |pos, _| positions.push(pos.clone()));
        }
        for attack_planes in [false, true] {
            let enc = Encoder::with_options(variant, EncoderOptions { attack_planes });
            let mut buf = vec![0.0f32; enc.input_len()];
            let reps = (200_000 / positions.len()).max(1);
            let t = Instant::now();
            for _ in 0..reps {
                for p in &positions {
                    enc.encode(p, &mut buf);
                    std::hint::black_box(&buf);
                }
            }
            let per_s = (reps * positions.len()) as f64 / t.elapsed().as_secs_f64();
            eprintln!(
                "{variant}: attack_planes={attack_planes}: {} planes, encode {:.0} positions/s",
                enc.input_planes(),
                per_s
            );
        }
        let enc = Encoder::new(variant);
        let (mut moves, mut idx) = (Vec::new(), Vec::new());
        let reps = (40_000 / positions.len()).max(1);
        let mut total = 0;
        let t = Instant::now();
        for _ in 0..reps {
            for p in &positions {
                enc.legal_moves_indexed(p, &mut moves, &mut idx);
                total += idx.len();
            }
        }
        let gen = t.elapsed().as_secs_f64() / reps as f64;
        let t = Instant::now();
        for _ in 0..reps {
            for p in &positions {
                p.generate_legal(&mut moves);
                std::hint::black_box(&moves);
            }
        }
        let plain = t.elapsed().as_secs_f64() / reps as f64;
        let total = total / reps;
        eprintln!(
            "{variant}: legal_moves_indexed {:.0} positions/s ({:.1} moves each; move generation alone {:.0}/s)",
            positions.len() as f64 / gen,
            total as f64 / positions.len() as f64,
            positions.len() as f64 / plain
        );
    }
}

/// The repetition planes follow the game history.
#[test]
fn repetition_planes() {
    let enc = Encoder::new(Variant::Shogi);
    let n = enc.squares();
    let planes: Vec<usize> = enc
        .input_plane_info()
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, InputPlane::Repetition { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(planes.len(), 2);
    let mut pos = Position::startpos(Variant::Shogi);
    let mut buf = vec![0.0; enc.input_len()];
    for round in 0..3 {
        assert_eq!(pos.repetitions(), round);
        enc.encode(&pos, &mut buf);
        let lit: Vec<bool> = planes.iter().map(|&p| buf[p * n..(p + 1) * n].iter().all(|&v| v == 1.0)).collect();
        assert_eq!(lit, vec![round >= 1, round >= 2], "round {round}");
        for (k, usi) in ["2h3h", "8b7b", "3h2h", "7b8b"].iter().enumerate() {
            pos.play_usi(usi).unwrap();
            // Each position of the cycle has occurred once per earlier round;
            // the last move brings back the start position.
            assert_eq!(pos.repetitions(), if k == 3 { round + 1 } else { round });
        }
    }
}
