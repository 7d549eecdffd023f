//! Japanese move text: the KI2 style (`７六歩`, `同　銀`, `５二金左`,
//! `５五歩打`) that names the piece and, only where two pieces of that kind
//! could go to the square, how to tell them apart; and the KIF style
//! (`７六歩(77)`) that adds the origin square.
//!
//! Telling pieces apart follows the Japan Shogi Association's rules: first
//! by the motion (上 forward, 引 back, 寄 sideways); if that is not enough,
//! by where the piece stands seen from its owner (左 left, 右 right, 直 a
//! gold or silver moving straight ahead); if neither alone is enough, both
//! (`左上`). A dragon or horse is left or right of the other one, never 直.
//! 打 marks a drop only when a piece on the board could also go there.

use super::{origins, NotationError};
use crate::decimal::decimal_at_most;
use crate::{Color, Kind, Move, Piece, Position, Square};

/// Full-width digits for files: `７`.
const FILE_DIGITS: [char; 9] = ['１', '２', '３', '４', '５', '６', '７', '８', '９'];
/// Kanji numerals for ranks and counts: `六`.
const KANJI_DIGITS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

/// The name of a piece in move text: `歩`, `成銀`, `龍`.
pub(crate) fn piece_name(kind: Kind, promoted: bool) -> &'static str {
    match (kind, promoted) {
        (Kind::Pawn, false) => "歩",
        (Kind::Lance, false) => "香",
        (Kind::Knight, false) => "桂",
        (Kind::Silver, false) => "銀",
        (Kind::Gold, _) => "金",
        (Kind::Bishop, false) => "角",
        (Kind::Rook, false) => "飛",
        (Kind::King, _) => "玉",
        (Kind::Pawn, true) => "と",
        (Kind::Lance, true) => "成香",
        (Kind::Knight, true) => "成桂",
        (Kind::Silver, true) => "成銀",
        (Kind::Bishop, true) => "馬",
        (Kind::Rook, true) => "龍",
        _ => "？",
    }
}

/// The one-character name of a piece on a board diagram: `杏`, `全`.
pub(crate) fn piece_char(kind: Kind, promoted: bool) -> char {
    match (kind, promoted) {
        (Kind::Lance, true) => '杏',
        (Kind::Knight, true) => '圭',
        (Kind::Silver, true) => '全',
        _ => piece_name(kind, promoted).chars().next().unwrap_or('？'),
    }
}

/// Reads a piece name at the start of `s`: the kind, promoted flag and the
/// bytes used. Accepts the variants other programs write (王, 竜, 全).
pub(crate) fn parse_piece_name(s: &str) -> Option<(Kind, bool, usize)> {
    const NAMES: [(&str, Kind, bool); 19] = [
        ("成香", Kind::Lance, true),
        ("成桂", Kind::Knight, true),
        ("成銀", Kind::Silver, true),
        ("歩", Kind::Pawn, false),
        ("香", Kind::Lance, false),
        ("桂", Kind::Knight, false),
        ("銀", Kind::Silver, false),
        ("金", Kind::Gold, false),
        ("角", Kind::Bishop, false),
        ("飛", Kind::Rook, false),
        ("玉", Kind::King, false),
        ("王", Kind::King, false),
        ("と", Kind::Pawn, true),
        ("杏", Kind::Lance, true),
        ("圭", Kind::Knight, true),
        ("全", Kind::Silver, true),
        ("馬", Kind::Bishop, true),
        ("龍", Kind::Rook, true),
        ("竜", Kind::Rook, true),
    ];
    NAMES.iter().find(|(name, ..)| s.starts_with(name)).map(|&(name, kind, promoted)| (kind, promoted, name.len()))
}

/// `７六`
pub(crate) fn square_text(sq: Square) -> String {
    format!("{}{}", FILE_DIGITS[sq.file() as usize - 1], KANJI_DIGITS[sq.rank() as usize - 1])
}

fn digit_value(c: char) -> Option<u8> {
    if let Some(i) = FILE_DIGITS.iter().position(|&d| d == c) {
        return Some(i as u8 + 1);
    }
    if let Some(i) = KANJI_DIGITS.iter().position(|&d| d == c) {
        return Some(i as u8 + 1);
    }
    c.to_digit(10).filter(|&d| d >= 1).map(|d| d as u8)
}

/// Reads a square at the start of `s` (`７六`, `76`, `７６`): the square and
/// the bytes used.
pub(crate) fn parse_square(s: &str) -> Option<(Square, usize)> {
    let mut chars = s.char_indices();
    let (_, f) = chars.next()?;
    let (i, r) = chars.next()?;
    let (file, rank) = (digit_value(f)?, digit_value(r)?);
    Some((Square::new(file, rank), i + r.len_utf8()))
}

/// A count of pieces in hand: `二`, `十八`; 1 is written as nothing.
pub(crate) fn count_text(n: u8) -> String {
    match n {
        0 | 1 => String::new(),
        2..=9 => KANJI_DIGITS[n as usize - 1].to_string(),
        10 => "十".to_string(),
        _ => format!("十{}", KANJI_DIGITS[(n - 11) as usize]),
    }
}

/// Reads a kanji count (`十八`); empty text is 1.
pub(crate) fn parse_count(s: &str) -> Option<u8> {
    if s.is_empty() {
        return Some(1);
    }
    if let Some(rest) = s.strip_prefix('十') {
        return if rest.is_empty() { Some(10) } else { parse_count(rest).filter(|&n| n < 10).map(|n| 10 + n) };
    }
    let mut chars = s.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return decimal_at_most(s, u64::from(u8::MAX)).map(|n| n as u8);
    }
    KANJI_DIGITS.iter().position(|&d| d == c).map(|i| i as u8 + 1).or_else(|| c.to_digit(10).map(|d| d as u8))
}

/// Where the moving piece stands, seen from its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Relative {
    Left,
    Right,
    /// A gold or silver (or a piece moving like one) moving straight ahead.
    Straight,
}

/// How the moving piece moves, seen from its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Motion {
    Up,
    Back,
    Sideways,
}

impl Relative {
    fn text(self) -> &'static str {
        match self {
            Relative::Left => "左",
            Relative::Right => "右",
            Relative::Straight => "直",
        }
    }
}

impl Motion {
    fn text(self) -> &'static str {
        match self {
            Motion::Up => "上",
            Motion::Back => "引",
            Motion::Sideways => "寄",
        }
    }
}

/// Rank distance towards the opponent (positive: forward).
fn forward(side: Color, from: Square, to: Square) -> i32 {
    let d = from.rank() as i32 - to.rank() as i32;
    if side == Color::Sente {
        d
    } else {
        -d
    }
}

/// File distance to the owner's left (positive: `from` is left of `to`).
fn leftward(side: Color, from: Square, to: Square) -> i32 {
    let d = from.file() as i32 - to.file() as i32;
    if side == Color::Sente {
        d
    } else {
        -d
    }
}

fn motion_of(side: Color, from: Square, to: Square) -> Motion {
    match forward(side, from, to) {
        d if d > 0 => Motion::Up,
        d if d < 0 => Motion::Back,
        _ => Motion::Sideways,
    }
}

/// Dragons and horses are told apart by their place next to each other,
/// other pieces by their place next to the destination.
fn sided_by_each_other(piece: Piece) -> bool {
    piece.is_promoted() && matches!(piece.kind(), Kind::Rook | Kind::Bishop)
}

/// The candidates (origin squares) that `relative` and `motion` leave.
fn select(
    side: Color,
    piece: Piece,
    to: Square,
    froms: &[Square],
    relative: Option<Relative>,
    motion: Option<Motion>,
) -> Vec<Square> {
    let mut left: Vec<Square> = froms.to_vec();
    if let Some(rel) = relative {
        left = if sided_by_each_other(piece) {
            // Left is the candidate furthest to the owner's left.
            let key = |s: &Square| leftward(side, *s, to);
            let best = match rel {
                Relative::Left => froms.iter().map(key).max(),
                Relative::Right => froms.iter().map(key).min(),
                Relative::Straight => None,
            };
            let unique_extreme = best.is_some_and(|b| froms.iter().filter(|s| key(s) == b).count() < froms.len());
            left.into_iter().filter(|s| unique_extreme && Some(key(s)) == best).collect()
        } else {
            left.into_iter()
                .filter(|&s| match rel {
                    Relative::Left => leftward(side, s, to) > 0,
                    Relative::Right => leftward(side, s, to) < 0,
                    Relative::Straight => leftward(side, s, to) == 0 && forward(side, s, to) > 0,
                })
                .collect()
        };
    }
    if let Some(m) = motion {
        left.retain(|&s| motion_of(side, s, to) == m);
    }
    left
}

/// Pieces that move like a gold (and the silver): only they use 直.
fn can_be_straight(piece: Piece) -> bool {
    match piece.kind() {
        Kind::Gold | Kind::Silver => true,
        Kind::Pawn | Kind::Lance | Kind::Knight => piece.is_promoted(),
        _ => false,
    }
}

/// The relative word that names `from` among `froms`, if one does.
fn relative_of(side: Color, piece: Piece, from: Square, to: Square, froms: &[Square]) -> Option<Relative> {
    if sided_by_each_other(piece) {
        [Relative::Left, Relative::Right]
            .into_iter()
            .find(|&r| select(side, piece, to, froms, Some(r), None).contains(&from))
    } else {
        match leftward(side, from, to) {
            d if d > 0 => Some(Relative::Left),
            d if d < 0 => Some(Relative::Right),
            _ if forward(side, from, to) > 0 && can_be_straight(piece) => Some(Relative::Straight),
            _ => None,
        }
    }
}

/// The side mark of KI2 text: ▲ sente, △ gote.
pub(crate) fn side_mark(side: Color) -> char {
    match side {
        Color::Sente => '▲',
        Color::Gote => '△',
    }
}

/// Destination as written: the square, or 同 when the previous move went
/// there too.
fn destination_text(to: Square, previous: Option<Square>) -> String {
    if previous == Some(to) {
        "同　".to_string()
    } else {
        square_text(to)
    }
}

/// KI2-style Japanese text of a legal move, without the side mark:
/// `７六歩`, `同　銀`, `２二角成`, `５五歩打`, `５二金左`. `previous` is the
/// destination of the move before, for 同.
pub fn japanese(pos: &Position, mv: Move, previous: Option<Square>) -> String {
    let side = pos.side_to_move();
    let mut text = destination_text(mv.to(), previous);
    match mv {
        Move::Drop { kind, to } => {
            text.push_str(piece_name(kind, false));
            if !origins(pos, Piece::new(side, kind, false), to).is_empty() {
                text.push('打');
            }
        }
        Move::Normal { from, to, promote } => {
            let Some(piece) = pos.piece_at(from) else { return text };
            text.push_str(piece_name(piece.kind(), piece.is_promoted()));
            let froms = origins(pos, piece, to);
            if froms.len() > 1 {
                text.push_str(&telling_apart(side, piece, from, to, &froms));
            }
            if promote {
                text.push('成');
            } else if pos.is_legal(Move::Normal { from, to, promote: true }) {
                text.push_str("不成");
            }
        }
        Move::Lion { .. } => text.push('？'),
    }
    text
}

/// The shortest words that single out `from`: the motion, else the place,
/// else both. Legal shogi positions always leave one of these unique.
fn telling_apart(side: Color, piece: Piece, from: Square, to: Square, froms: &[Square]) -> String {
    let motion = Some(motion_of(side, from, to));
    let relative = relative_of(side, piece, from, to, froms);
    let tries = [(None, motion), (relative, None), (relative, motion)];
    let (r, m) = tries
        .into_iter()
        .filter(|(r, m)| r.is_some() || m.is_some())
        .find(|&(r, m)| select(side, piece, to, froms, r, m) == [from])
        .unwrap_or((relative, motion));
    format!("{}{}", r.map_or("", Relative::text), m.map_or("", Motion::text))
}

/// KIF-style text of a legal move: `７六歩(77)`, `同　銀(42)`, `４四歩打`,
/// `４三歩成(44)`. The origin says which piece moved, so there are no
/// 左/右 words, and 不成 is left out (other programs do not read it).
pub fn kif_move(pos: &Position, mv: Move, previous: Option<Square>) -> String {
    let mut text = destination_text(mv.to(), previous);
    match mv {
        Move::Drop { kind, .. } => {
            text.push_str(piece_name(kind, false));
            text.push('打');
        }
        Move::Normal { from, promote, .. } => {
            if let Some(p) = pos.piece_at(from) {
                text.push_str(piece_name(p.kind(), p.is_promoted()));
            }
            if promote {
                text.push('成');
            }
            text.push_str(&format!("({}{})", from.file(), from.rank()));
        }
        Move::Lion { .. } => text.push('？'),
    }
    text
}

/// What Japanese move text says, before it is matched to a position.
struct Written {
    side: Option<Color>,
    to: Square,
    kind: Kind,
    promoted: bool,
    relative: Option<Relative>,
    motion: Option<Motion>,
    /// 成 (true), 不成 (false) or neither.
    promote: Option<bool>,
    drop: bool,
    origin: Option<Square>,
}

/// Reads move text (either style) as far as the position is not needed.
fn parse_written(text: &str, previous: Option<Square>, with_origin: bool) -> Result<Written, NotationError> {
    let err = |why: &str| NotationError::new(text, why);
    let mut s = text.trim();
    let mut side = None;
    if let Some(c) = s.chars().next() {
        let mark = match c {
            '▲' | '☗' => Some(Color::Sente),
            '△' | '☖' | '▽' => Some(Color::Gote),
            _ => None,
        };
        if mark.is_some() {
            side = mark;
            s = &s[c.len_utf8()..];
        }
    }
    let to = if let Some(rest) = s.strip_prefix('同') {
        s = rest.trim_start_matches(['　', ' ']);
        previous.ok_or_else(|| err("同 (same square) with no move before it"))?
    } else {
        let (sq, used) = parse_square(s).ok_or_else(|| err("expected a square such as ７六 or 同"))?;
        s = &s[used..];
        // Some programs write the square before 同: ７六同歩.
        s = s.strip_prefix('同').map_or(s, |r| r.trim_start_matches(['　', ' ']));
        sq
    };
    let (kind, promoted, used) = parse_piece_name(s).ok_or_else(|| err("expected a piece name"))?;
    s = &s[used..];
    let mut written =
        Written { side, to, kind, promoted, relative: None, motion: None, promote: None, drop: false, origin: None };
    while let Some(c) = s.chars().next() {
        let mut used = c.len_utf8();
        match c {
            '左' => written.relative = Some(Relative::Left),
            '右' => written.relative = Some(Relative::Right),
            '直' => written.relative = Some(Relative::Straight),
            '上' | '行' => written.motion = Some(Motion::Up),
            '引' => written.motion = Some(Motion::Back),
            '寄' => written.motion = Some(Motion::Sideways),
            '打' => written.drop = true,
            '生' => written.promote = Some(false),
            '成' => written.promote = Some(true),
            '不' if s.starts_with("不成") => {
                written.promote = Some(false);
                used = "不成".len();
            }
            '(' | '（' if with_origin => {
                let inner = &s[c.len_utf8()..];
                let close = inner.find([')', '）']).ok_or_else(|| err("origin square not closed with ')'"))?;
                let digits: Option<Vec<u8>> = inner[..close].chars().map(digit_value).collect();
                let Some(digits) = digits.filter(|d| d.len() == 2) else {
                    return Err(err("origin must be two digits, as in (77)"));
                };
                written.origin = Some(Square::new(digits[0], digits[1]));
                used = c.len_utf8() + close + inner[close..].chars().next().map_or(0, char::len_utf8);
            }
            ' ' | '　' | '\t' => {}
            _ => return Err(err("unexpected text after the piece")),
        }
        s = &s[used..];
    }
    Ok(written)
}

fn check_side(pos: &Position, text: &str, side: Option<Color>) -> Result<(), NotationError> {
    match side {
        Some(c) if c != pos.side_to_move() => {
            Err(NotationError::new(text, format!("it is {}'s move, not {}'s", pos.side_to_move().name(), c.name())))
        }
        _ => Ok(()),
    }
}

/// Reads KI2-style Japanese move text (`▲７六歩`, `同　銀`, `５二金左上`,
/// `２二角不成`; the side mark is optional) as a legal move of `pos`.
/// `previous` is the destination of the move before, for 同.
pub fn parse_japanese(pos: &Position, text: &str, previous: Option<Square>) -> Result<Move, NotationError> {
    let w = parse_written(text, previous, false)?;
    check_side(pos, text, w.side)?;
    let side = pos.side_to_move();
    let piece = Piece::new(side, w.kind, w.promoted);
    let drop = Move::Drop { kind: w.kind, to: w.to };
    let can_drop = !w.promoted && pos.is_legal(drop);
    let froms = origins(pos, piece, w.to);
    if w.drop || (froms.is_empty() && can_drop) {
        if w.relative.is_some() || w.motion.is_some() || w.promote.is_some() || !can_drop {
            return Err(NotationError::new(text, "no such drop here"));
        }
        return Ok(drop);
    }
    if froms.is_empty() {
        return Err(NotationError::new(
            text,
            format!("no {} can move to {}", piece_name(w.kind, w.promoted), square_text(w.to)),
        ));
    }
    let chosen = select(side, piece, w.to, &froms, w.relative, w.motion);
    let from = match chosen.as_slice() {
        [from] => *from,
        [] => return Err(NotationError::new(text, "no piece fits 左/右/直/上/引/寄 as written")),
        _ => return Err(NotationError::ambiguous(text, "more than one piece can move there; add 左/右/直/上/引/寄")),
    };
    finish_board_move(pos, text, from, w.to, w.promote)
}

/// The board move from `from` to `to`, promoting as the text says (no word:
/// no promotion).
fn finish_board_move(
    pos: &Position,
    text: &str,
    from: Square,
    to: Square,
    promote: Option<bool>,
) -> Result<Move, NotationError> {
    let mv = Move::Normal { from, to, promote: promote.unwrap_or(false) };
    if pos.is_legal(mv) {
        return Ok(mv);
    }
    let other = Move::Normal { from, to, promote: !promote.unwrap_or(false) };
    let why = match (promote, pos.is_legal(other)) {
        (Some(true), true) => "this move cannot promote",
        (_, true) => "the piece must promote here (成)",
        _ => "illegal move",
    };
    Err(NotationError::new(text, why))
}

/// Reads KIF-style move text (`７六歩(77)`, `同　銀(42)`, `４四歩打`) as a
/// legal move of `pos`: the origin decides, and the piece name must match
/// what stands there.
pub(crate) fn parse_kif_move(pos: &Position, text: &str, previous: Option<Square>) -> Result<Move, NotationError> {
    let w = parse_written(text, previous, true)?;
    check_side(pos, text, w.side)?;
    let side = pos.side_to_move();
    let from = match w.origin {
        Some(sq) if sq.file() == 0 || sq.rank() == 0 => None,
        other => other,
    };
    if w.drop || from.is_none() {
        if !w.drop {
            return Err(NotationError::new(text, "a board move needs its origin, as in (77); a drop needs 打"));
        }
        let drop = Move::Drop { kind: w.kind, to: w.to };
        if w.promoted || !pos.is_legal(drop) {
            let why = if pos.hand(side, w.kind) == 0 { "piece not in hand" } else { "illegal drop" };
            return Err(NotationError::new(text, why));
        }
        return Ok(drop);
    }
    let from = from.expect("checked above");
    let wanted = Piece::new(side, w.kind, w.promoted);
    match pos.piece_at(from) {
        Some(p) if p == wanted => {}
        Some(p) if p.color() == side => {
            return Err(NotationError::new(
                text,
                format!("the piece on {}{} is {}", from.file(), from.rank(), piece_name(p.kind(), p.is_promoted())),
            ))
        }
        _ => {
            return Err(NotationError::new(
                text,
                format!("no piece of the side to move on {}{}", from.file(), from.rank()),
            ))
        }
    }
    finish_board_move(pos, text, from, w.to, w.promote)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    fn pos(sfen: &str) -> Position {
        Position::from_sfen(Variant::Shogi, sfen).unwrap()
    }

    fn usi(p: &Position, text: &str) -> Move {
        p.parse_usi(text).unwrap()
    }

    /// Writes the move, checks the text, and reads it back.
    fn check(p: &Position, usi_text: &str, expected: &str) {
        let mv = usi(p, usi_text);
        let text = japanese(p, mv, None);
        assert_eq!(text, expected, "{usi_text} in {}", p.to_sfen());
        assert_eq!(parse_japanese(p, &text, None).unwrap(), mv, "{text}");
    }

    #[test]
    fn plain_moves_drops_and_promotions() {
        let mut p = Position::startpos(Variant::Shogi);
        check(&p, "7g7f", "７六歩");
        p.play_usi("7g7f").unwrap();
        p.play_usi("3c3d").unwrap();
        check(&p, "8h2b+", "２二角成");
        check(&p, "8h2b", "２二角不成");
        p.play_usi("8h2b+").unwrap();
        let mv = usi(&p, "3a2b");
        assert_eq!(japanese(&p, mv, Some(mv.to())), "同　銀");
        assert_eq!(parse_japanese(&p, "△同　銀", Some(mv.to())).unwrap(), mv);
        assert_eq!(parse_japanese(&p, "同銀", Some(mv.to())).unwrap(), mv);
        assert!(parse_japanese(&p, "▲同　銀", Some(mv.to())).is_err(), "wrong side");
        // A drop with no board piece able to go there needs no 打.
        let p = pos("4k4/9/9/9/9/9/9/9/4K4 b P 1");
        check(&p, "P*5e", "５五歩");
        // With one that can, it does.
        let p = pos("4k4/9/9/9/9/4S4/9/9/4K4 b S 1");
        check(&p, "S*5e", "５五銀打");
        check(&p, "5f5e", "５五銀");
        assert_eq!(kif_move(&p, usi(&p, "S*5e"), None), "５五銀打");
        assert_eq!(kif_move(&p, usi(&p, "5f5e"), None), "５五銀(56)");
    }

    #[test]
    fn two_golds_by_motion_then_side() {
        // Golds on 6i and 4i, both able to reach 5h: both move up, so 左/右.
        let p = pos("4k4/9/9/9/9/9/9/9/3GKG3 b - 1");
        check(&p, "6i5h", "５八金左");
        check(&p, "4i5h", "５八金右");
        // Gold on 5i straight behind and 6h beside 5h: motion is enough.
        let p = pos("4k4/9/9/9/9/9/9/3G5/4G3K b - 1");
        check(&p, "5i5h", "５八金上");
        check(&p, "6h5h", "５八金寄");
        // 5i straight up and 6i diagonally up: 直 and 左.
        let p = pos("4k4/9/9/9/9/9/9/9/3GG3K b - 1");
        check(&p, "5i5h", "５八金直");
        check(&p, "6i5h", "５八金左");
    }

    #[test]
    fn three_golds_need_side_and_motion() {
        // Sente golds on 6b, 6c and 4b go to 5b.
        let p = pos("9/3G1G3/3G5/9/9/9/9/9/k3K4 b - 1");
        check(&p, "6c5b", "５二金上");
        check(&p, "6b5b", "５二金左寄");
        check(&p, "4b5b", "５二金右");
        // Three golds in a row below: 左, 直, 右.
        let p = pos("9/9/3GGG3/9/9/9/9/9/k3K4 b - 1");
        check(&p, "6c5b", "５二金左");
        check(&p, "5c5b", "５二金直");
        check(&p, "4c5b", "５二金右");
    }

    #[test]
    fn silvers_and_gote_sees_from_its_own_side() {
        // Sente silvers on 6d and 6f reach 5e: 引 and 上.
        let p = pos("9/9/9/3S5/9/3S5/9/9/k3K4 b - 1");
        check(&p, "6f5e", "５五銀上");
        check(&p, "6d5e", "５五銀引");
        // Gote golds on 4a and 6a go to 5b: gote's left is the lower file.
        let p = pos("3g1g3/9/9/9/9/9/9/9/K3k4 w - 1");
        check(&p, "4a5b", "５二金左");
        check(&p, "6a5b", "５二金右");
        // Gote golds on 5a (straight ahead for gote) and 6b (beside).
        let p = pos("4g4/3g5/9/9/9/9/9/9/K3k4 w - 1");
        check(&p, "5a5b", "５二金上");
        check(&p, "6b5b", "５二金寄");
    }

    #[test]
    fn dragons_are_left_or_right_of_each_other() {
        // Dragons on 1c and 2b; both reach 2d moving back: 右 (1c), 左 (2b).
        let p = pos("k8/7+R1/8+R/9/9/9/9/9/4K4 b - 1");
        check(&p, "1c2d", "２四龍右");
        check(&p, "2b2d", "２四龍左");
        // Horses on 9a and 8a going to 8b: both move back; 9a is on the left.
        let p = pos("+B+B7/9/9/9/9/9/9/9/k3K4 b - 1");
        check(&p, "9a8b", "８二馬左");
        check(&p, "8a8b", "８二馬右");
        // Dragons on 5i and 1e reaching 5e: motion is enough.
        let p = pos("k8/9/9/9/8+R/9/9/9/4+R3K b - 1");
        check(&p, "5i5e", "５五龍上");
        check(&p, "1e5e", "５五龍寄");
    }

    #[test]
    fn knights_and_ambiguous_text() {
        let p = pos("k8/9/9/9/9/9/3N1N3/9/4K4 b - 1");
        check(&p, "6g5e", "５五桂左");
        check(&p, "4g5e", "５五桂右");
        let e = parse_japanese(&p, "５五桂", None).unwrap_err();
        assert!(e.ambiguous, "{e}");
        assert!(parse_japanese(&p, "５五桂直", None).is_err());
        assert!(parse_japanese(&p, "５五銀", None).is_err());
    }

    #[test]
    fn promotion_words() {
        let p = pos("k8/9/9/4P4/9/9/9/9/4K4 b - 1");
        check(&p, "5d5c+", "５三歩成");
        check(&p, "5d5c", "５三歩不成");
        let p = pos("k8/4P4/9/9/9/9/9/9/4K4 b - 1");
        assert!(parse_japanese(&p, "５一歩", None).is_err(), "must promote");
        assert_eq!(parse_japanese(&p, "５一歩成", None).unwrap(), usi(&p, "5b5a+"));
        let p = pos("k8/9/9/9/9/9/9/9/4K1+S2 b - 1");
        check(&p, "3i3h", "３八成銀");
    }

    #[test]
    fn kif_moves_check_the_piece_named() {
        let p = Position::startpos(Variant::Shogi);
        assert_eq!(parse_kif_move(&p, "７六歩(77)", None).unwrap(), usi(&p, "7g7f"));
        assert!(parse_kif_move(&p, "７六銀(77)", None).is_err());
        assert!(parse_kif_move(&p, "７六歩", None).is_err(), "no origin");
        assert!(parse_kif_move(&p, "７五歩(77)", None).is_err());
    }

    #[test]
    fn hand_counts() {
        for n in 1..=18 {
            assert_eq!(parse_count(&count_text(n)), Some(n));
        }
        assert_eq!(count_text(18), "十八");
    }
}
