//! Perft in process, for timing and instruction counts (valgrind's
//! callgrind) of one variant and position:
//!
//! `cargo run --release -p koma-rules --example perft -- dai startpos 4`
//! `cargo run --release -p koma-rules --example perft -- shogi "SFEN" 3`

use rules::{Position, Variant};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [variant, position, depth] = args.as_slice() else {
        return Err("usage: perft VARIANT startpos|SFEN DEPTH".into());
    };
    let variant: Variant = variant.parse()?;
    let mut pos = match position.as_str() {
        "startpos" => Position::startpos(variant),
        sfen => Position::from_sfen(variant, sfen)?,
    };
    let depth: u32 = depth.parse()?;
    let start = Instant::now();
    let nodes = rules::perft(&mut pos, depth);
    let secs = start.elapsed().as_secs_f64();
    println!("{variant} perft {depth}: {nodes} nodes in {secs:.3} s ({:.0} nodes/s)", nodes as f64 / secs);
    Ok(())
}
