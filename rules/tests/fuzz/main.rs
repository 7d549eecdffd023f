//! Fuzzing every text reader of the rules crate with random and mutated
//! input (valid input with bytes flipped, inserted, deleted, numbers
//! replaced by ones past every integer type, lines dropped or doubled):
//! no reader may panic, and what a reader accepts must mean what the text
//! says: a SFEN reads square by square as written and round-trips, a move
//! text is the canonical text of the move read, a record re-written and
//! re-read gives the same game. Each surface prints how many inputs it
//! tried and how many were accepted (`cargo test --release --test fuzz_text --
//! --nocapture`); `KOMA_FUZZ_CASES=<n>` runs n inputs per surface, `KOMA_FUZZ_SCALE=10`
//! ten times as many as by default.

mod harness;
mod moves;
mod records;
mod sfen;
#[path = "../support/mod.rs"]
mod support;
