//! Zobrist keys, computed at compile time from a fixed seed so that hashes
//! are the same in every build and on every machine.

use crate::types::{CELLS, CODES, KIND_SLOTS};

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

/// Most pieces of one kind a hand can hold (18 pawns in standard shogi).
pub(crate) const MAX_HAND: usize = 19;

pub(crate) struct Keys {
    pub board: [[u64; CODES]; CELLS],
    pub hand: [[[u64; MAX_HAND]; KIND_SLOTS]; 2],
    pub gote_to_move: u64,
}

const fn build() -> Keys {
    let mut keys = Keys { board: [[0; CODES]; CELLS], hand: [[[0; MAX_HAND]; KIND_SLOTS]; 2], gote_to_move: 0 };
    let mut state = 0x6B6F_6D61_u64; // "koma"
    let mut sq = 0;
    while sq < CELLS {
        let mut code = 1;
        while code < CODES {
            let (s, k) = splitmix(state);
            state = s;
            keys.board[sq][code] = k;
            code += 1;
        }
        sq += 1;
    }
    let mut c = 0;
    while c < 2 {
        let mut kind = 0;
        while kind < KIND_SLOTS {
            // Count 0 keeps key 0 so that an empty hand adds nothing.
            let mut n = 1;
            while n < MAX_HAND {
                let (s, k) = splitmix(state);
                state = s;
                keys.hand[c][kind][n] = k;
                n += 1;
            }
            kind += 1;
        }
        c += 1;
    }
    let (_, k) = splitmix(state);
    keys.gote_to_move = k;
    keys
}

pub(crate) static KEYS: Keys = build();
