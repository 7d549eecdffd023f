//! The solver's transposition table: proof and disproof numbers by position, in a fixed
//! amount of memory.
//!
//! Entries are keyed by the board's hash (hands left out, [`rules::Position::board_hash`])
//! and the attacker's hand (see [`super::hand`]). A decided entry holds, instead of the
//! hand it was searched with, its proof hand (the least the attacker needs: the proof
//! holds for every hand that covers it) or disproof hand (the most the attacker may hold:
//! the disproof holds for every hand it covers), so one entry answers for many hands. A
//! disproof that rests on the search path (a repetition, the depth limit) answers only
//! for its own hand at its own ply.
//!
//! The table is a power of two of clusters of [`CLUSTER`] entries, chosen by the key's
//! high bits; a full cluster gives up the entry that cost the least search. A generation number tells this solve's
//! entries from earlier ones, so a new solve starts without clearing memory.

use super::hand::covers;

/// Proof or disproof number of a decided position (the other number is 0).
pub(crate) const INF: u32 = 1 << 30;
/// The largest number of an undecided position: sums stop here.
pub(crate) const NEAR_INF: u32 = INF - 1;

/// Entries per cluster (256 bytes: a row of keys and the entries). Every hand of one
/// board shares its board's cluster, so it must hold a few.
const CLUSTER: usize = 8;

/// What the table knows of a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Numbers {
    pub pn: u32,
    pub dn: u32,
    /// Proven: the proof hand; disproven: the disproof hand; else unused.
    pub hand: u32,
    /// For a proof: the plies of the longest line of the proof found (0: mated now).
    pub len: u16,
    /// For a disproof: it rests on a repetition of the search path or the depth limit
    /// (both depend on how the position was reached).
    pub path_dependent: bool,
    /// Nodes searched below the position so far (from the table; 0 when new).
    pub searched: u32,
}

impl Numbers {
    pub const fn new(pn: u32, dn: u32) -> Numbers {
        Numbers { pn, dn, hand: 0, len: 0, path_dependent: false, searched: 0 }
    }

    pub const fn proven(hand: u32, len: u16) -> Numbers {
        Numbers { pn: 0, dn: INF, hand, len, path_dependent: false, searched: 0 }
    }

    pub const fn disproven(hand: u32, path_dependent: bool) -> Numbers {
        Numbers { pn: INF, dn: 0, hand, len: 0, path_dependent, searched: 0 }
    }

    pub fn is_proven(&self) -> bool {
        self.pn == 0
    }

    pub fn is_disproven(&self) -> bool {
        self.dn == 0
    }
}

/// One position's entry; its key is in the cluster's key row.
#[derive(Clone, Copy)]
struct Entry {
    hand: u32,
    pn: u32,
    dn: u32,
    /// Nodes searched below this position (what replacement keeps).
    amount: u32,
    /// The solve that wrote it (0: never written).
    generation: u16,
    len: u16,
    /// The ply it was searched at (what a path-dependent disproof needs).
    ply: u16,
    path_dependent: bool,
}

const EMPTY: Entry = Entry { hand: 0, pn: 0, dn: 0, amount: 0, generation: 0, len: 0, ply: 0, path_dependent: false };

/// The entries of one index: the keys in a row of their own (one cache line), so that a
/// lookup reads the entries only where the key matches.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Cluster {
    keys: [u64; CLUSTER],
    entries: [Entry; CLUSTER],
}

const EMPTY_CLUSTER: Cluster = Cluster { keys: [0; CLUSTER], entries: [EMPTY; CLUSTER] };

impl Entry {
    fn numbers(&self) -> Numbers {
        Numbers {
            pn: self.pn,
            dn: self.dn,
            hand: self.hand,
            len: self.len,
            path_dependent: self.path_dependent,
            searched: self.amount,
        }
    }

    fn decided(&self) -> bool {
        self.pn == 0 || self.dn == 0
    }

    /// Does this entry answer for the position with `hand` at `ply`?
    #[inline]
    fn answers(&self, hand: u32, ply: u16) -> bool {
        if self.pn == 0 {
            covers(hand, self.hand)
        } else if self.dn == 0 && !self.path_dependent {
            covers(self.hand, hand)
        } else {
            self.hand == hand && (!self.path_dependent || self.ply == ply)
        }
    }
}

pub(crate) struct Table {
    clusters: Vec<Cluster>,
    /// Cluster index mask.
    mask: usize,
    generation: u16,
}

impl Table {
    /// A table of at most `mib` MiB (at least one cluster).
    pub fn new(mib: usize) -> Table {
        let bytes = mib.max(1) << 20;
        let clusters = (bytes / std::mem::size_of::<Cluster>()).max(1);
        // A power of two, not above the budget.
        let clusters = 1usize << (usize::BITS - 1 - clusters.leading_zeros());
        Table { clusters: vec![EMPTY_CLUSTER; clusters], mask: clusters - 1, generation: 0 }
    }

    /// The table's size in bytes.
    pub fn bytes(&self) -> usize {
        self.clusters.len() * std::mem::size_of::<Cluster>()
    }

    /// Forgets every entry (cheaply: by starting a new generation).
    pub fn new_generation(&mut self) {
        if self.generation == u16::MAX {
            self.clusters.fill(EMPTY_CLUSTER);
            self.generation = 0;
        }
        self.generation += 1;
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        (key >> 32) as usize & self.mask
    }

    /// What is known of the position with board hash `key`, attacker's hand `hand`, at
    /// `ply`: a decided entry that covers it first, else its own undecided entry.
    pub fn lookup(&self, key: u64, hand: u32, ply: u16) -> Option<Numbers> {
        let cluster = &self.clusters[self.index(key)];
        let mut undecided = None;
        for (i, &k) in cluster.keys.iter().enumerate() {
            let e = &cluster.entries[i];
            if k != key || e.generation != self.generation || !e.answers(hand, ply) {
                continue;
            }
            if e.decided() {
                return Some(e.numbers());
            }
            undecided = Some(e.numbers());
        }
        undecided
    }

    /// Records `n` for the position searched with attacker's hand `hand` at `ply`,
    /// adding `searched` to its amount of search. A decided `n` is stored with its own
    /// proof or disproof hand, and clears the entries of the same board it answers for.
    pub fn store(&mut self, key: u64, hand: u32, ply: u16, n: Numbers, searched: u64) {
        let generation = self.generation;
        let index = self.index(key);
        let cluster = &mut self.clusters[index];
        let current = |c: &Cluster, i: usize| c.keys[i] == key && c.entries[i].generation == generation;
        let own = |c: &Cluster, i: usize| current(c, i) && !c.entries[i].decided() && c.entries[i].hand == hand;
        let slot = match (0..CLUSTER).find(|&i| own(cluster, i)) {
            Some(i) => i,
            // Stale entries first, then the one that cost the least search.
            None => (0..CLUSTER)
                .min_by_key(|&i| {
                    let e = &cluster.entries[i];
                    (e.generation == generation, e.amount, e.decided())
                })
                .expect("a cluster has entries"),
        };
        let amount = if own(cluster, slot) { cluster.entries[slot].amount } else { 0 };
        let decided = n.pn == 0 || n.dn == 0;
        let new = Entry {
            hand: if decided { n.hand } else { hand },
            pn: n.pn,
            dn: n.dn,
            amount: amount.saturating_add(searched.min(u32::MAX as u64) as u32),
            generation,
            len: n.len,
            ply,
            path_dependent: n.path_dependent,
        };
        cluster.keys[slot] = key;
        cluster.entries[slot] = new;
        if decided && !n.path_dependent {
            for i in 0..CLUSTER {
                let e = cluster.entries[i];
                let same_kind = (e.pn == 0) == (new.pn == 0) && !e.path_dependent;
                if i != slot && current(cluster, i) && (!e.decided() || same_kind) && new.answers(e.hand, e.ply) {
                    cluster.entries[i] = EMPTY;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_cover_larger_hands_and_disproofs_smaller() {
        let mut t = Table::new(1);
        t.new_generation();
        let (small, large) = (0b1, 0b11); // one pawn, three pawns
        let proof = |n: Option<Numbers>| n.filter(|n| n.is_proven()).map(|n| (n.hand, n.len));
        t.store(7, large, 0, Numbers::proven(small, 5), 10);
        assert_eq!(proof(t.lookup(7, large, 3)), Some((small, 5)));
        assert_eq!(proof(t.lookup(7, small, 3)), Some((small, 5)), "the proof hand is enough");
        assert_eq!(t.lookup(7, 0, 3), None);
        t.store(9, small, 0, Numbers::disproven(large, false), 10);
        assert!(t.lookup(9, large, 1).is_some_and(|n| n.is_disproven() && n.hand == large && n.searched == 10));
        assert_eq!(t.lookup(9, 0b111, 1), None);
        t.store(9, 0b111, 0, Numbers::new(3, 4), 1);
        assert!(t.lookup(9, 0b111, 5).is_some_and(|n| (n.pn, n.dn) == (3, 4)));
        t.new_generation();
        assert_eq!(t.lookup(7, large, 0), None, "a new solve forgets");
    }

    #[test]
    fn a_decided_entry_replaces_the_entries_it_answers_for() {
        let mut t = Table::new(1);
        t.new_generation();
        for pawns in [0b1, 0b10, 0b11] {
            t.store(3, pawns, 2, Numbers::new(5, 5), 1);
        }
        t.store(3, 0b11, 2, Numbers::proven(0b10, 7), 1);
        assert!(t.lookup(3, 0b11, 2).is_some_and(|n| n.is_proven()));
        assert!(t.lookup(3, 0b10, 2).is_some_and(|n| n.is_proven()));
        assert!(t.lookup(3, 0b1, 2).is_some_and(|n| !n.is_proven() && n.pn == 5), "one pawn is not enough");
    }

    #[test]
    fn path_dependent_disproofs_answer_only_for_their_hand_and_ply() {
        let mut t = Table::new(1);
        t.new_generation();
        t.store(5, 0b11, 4, Numbers::disproven(0b11, true), 1);
        assert!(t.lookup(5, 0b11, 4).is_some_and(|n| n.is_disproven()));
        assert_eq!(t.lookup(5, 0b11, 6), None);
        assert_eq!(t.lookup(5, 0b1, 4), None);
    }

    #[test]
    fn a_full_cluster_keeps_the_costly_entries() {
        let mut t = Table::new(1);
        t.new_generation();
        // Keys that differ only above the index bits (32 and up) share a cluster.
        let shift = |i: u64| (i << 60) | 5;
        for i in 0..CLUSTER as u64 {
            t.store(shift(i), 0, 0, Numbers::new(1, 1), 100 + i);
        }
        t.store(shift(9), 0, 0, Numbers::new(1, 1), 1000);
        assert_eq!(t.lookup(shift(0), 0, 0), None, "the cheapest went");
        assert!(t.lookup(shift(1), 0, 0).is_some() && t.lookup(shift(9), 0, 0).is_some());
        assert!(t.bytes() <= 1 << 20 && t.bytes() >= 1 << 19);
        assert_eq!(std::mem::size_of::<Cluster>(), 256);
    }
}
