//! Standard shogi handicap start positions. The giver (gote in SFEN)
//! removes pieces and moves first; left and right are from its view, so the
//! lance handicap removes the lance on 1a.

use crate::position::Position;
use crate::variant::Variant;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Handicap {
    /// 香落ち: the giver's left lance.
    Lance,
    /// 右香落ち: the giver's right lance.
    RightLance,
    /// 角落ち
    Bishop,
    /// 飛車落ち
    Rook,
    /// 飛香落ち
    RookLance,
    /// 二枚落ち: rook and bishop.
    TwoPiece,
    /// 四枚落ち: rook, bishop, both lances.
    FourPiece,
    /// 六枚落ち: and both knights.
    SixPiece,
    /// 八枚落ち: and both silvers.
    EightPiece,
    /// 十枚落ち: and both golds (king and pawns left).
    TenPiece,
    /// 歩三兵: king alone on the board, three pawns in hand.
    ThreePawns,
    /// 裸玉: king alone.
    NakedKing,
}

const BLACK: &str = "9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL";

impl Handicap {
    pub const ALL: [Handicap; 12] = [
        Handicap::Lance,
        Handicap::RightLance,
        Handicap::Bishop,
        Handicap::Rook,
        Handicap::RookLance,
        Handicap::TwoPiece,
        Handicap::FourPiece,
        Handicap::SixPiece,
        Handicap::EightPiece,
        Handicap::TenPiece,
        Handicap::ThreePawns,
        Handicap::NakedKing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Handicap::Lance => "lance",
            Handicap::RightLance => "right-lance",
            Handicap::Bishop => "bishop",
            Handicap::Rook => "rook",
            Handicap::RookLance => "rook-lance",
            Handicap::TwoPiece => "2-piece",
            Handicap::FourPiece => "4-piece",
            Handicap::SixPiece => "6-piece",
            Handicap::EightPiece => "8-piece",
            Handicap::TenPiece => "10-piece",
            Handicap::ThreePawns => "three-pawns",
            Handicap::NakedKing => "naked-king",
        }
    }

    /// The Japanese name used by KIF's 手合割 header.
    pub fn japanese(self) -> &'static str {
        match self {
            Handicap::Lance => "香落ち",
            Handicap::RightLance => "右香落ち",
            Handicap::Bishop => "角落ち",
            Handicap::Rook => "飛車落ち",
            Handicap::RookLance => "飛香落ち",
            Handicap::TwoPiece => "二枚落ち",
            Handicap::FourPiece => "四枚落ち",
            Handicap::SixPiece => "六枚落ち",
            Handicap::EightPiece => "八枚落ち",
            Handicap::TenPiece => "十枚落ち",
            Handicap::ThreePawns => "歩三兵",
            Handicap::NakedKing => "裸玉",
        }
    }

    pub fn sfen(self) -> String {
        let (gote, hand) = match self {
            Handicap::Lance => ("lnsgkgsn1/1r5b1/ppppppppp", "-"),
            Handicap::RightLance => ("1nsgkgsnl/1r5b1/ppppppppp", "-"),
            Handicap::Bishop => ("lnsgkgsnl/1r7/ppppppppp", "-"),
            Handicap::Rook => ("lnsgkgsnl/7b1/ppppppppp", "-"),
            Handicap::RookLance => ("lnsgkgsn1/7b1/ppppppppp", "-"),
            Handicap::TwoPiece => ("lnsgkgsnl/9/ppppppppp", "-"),
            Handicap::FourPiece => ("1nsgkgsn1/9/ppppppppp", "-"),
            Handicap::SixPiece => ("2sgkgs2/9/ppppppppp", "-"),
            Handicap::EightPiece => ("3gkg3/9/ppppppppp", "-"),
            Handicap::TenPiece => ("4k4/9/ppppppppp", "-"),
            Handicap::ThreePawns => ("4k4/9/9", "3p"),
            Handicap::NakedKing => ("4k4/9/9", "-"),
        };
        format!("{gote}/{BLACK} w {hand} 1")
    }

    pub fn position(self) -> Position {
        Position::from_sfen(Variant::Shogi, &self.sfen()).expect("handicap positions are valid")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown handicap '{}' (expected one of: lance, right-lance, bishop, rook, rook-lance, 2-piece, 4-piece, 6-piece, 8-piece, 10-piece, three-pawns, naked-king)", crate::excerpt(.0))]
pub struct UnknownHandicap(pub String);

impl FromStr for Handicap {
    type Err = UnknownHandicap;
    fn from_str(s: &str) -> Result<Handicap, UnknownHandicap> {
        Handicap::ALL
            .iter()
            .copied()
            .find(|h| h.name().eq_ignore_ascii_case(s) || h.japanese() == s)
            .ok_or_else(|| UnknownHandicap(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_handicap_is_a_valid_position_with_gote_to_move() {
        for h in Handicap::ALL {
            let pos = h.position();
            assert_eq!(pos.side_to_move(), crate::Color::Gote, "{h:?}");
            assert_eq!(h.name().parse::<Handicap>().unwrap(), h);
            assert_eq!(h.japanese().parse::<Handicap>().unwrap(), h);
            assert!(!pos.legal_moves().is_empty());
        }
        assert!("queen".parse::<Handicap>().is_err());
    }
}
