//! Forward-pass throughput on the CPU (or `--device cuda`) for two reference networks:
//! `cargo run --release -p koma-model --example bench_nn -- [--device cpu] [--seconds 2]`.
//! The `koma bench nn` subcommand is the user-facing form of this.

use std::time::Duration;

use koma_model::{bench_forward, parse_device, BenchOptions, NetConfig, NetShape, Precision};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let device = parse_device(&arg("--device").unwrap_or_else(|| "cpu".into())).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let seconds: f64 = arg("--seconds").map_or(2.0, |s| s.parse().expect("--seconds"));
    let shape = NetShape { input_planes: 100, board_height: 9, board_width: 9, policy_planes: 140 };
    let nets = [
        ("b4c32", NetConfig { blocks: 4, channels: 32, ..NetConfig::default() }),
        ("b10c128", NetConfig { blocks: 10, channels: 128, ..NetConfig::default() }),
    ];
    let options = BenchOptions { min_time: Duration::from_secs_f64(seconds), ..Default::default() };
    println!("device {device:?}, torch threads {}, shape {shape}", koma_model::tch::get_num_threads());
    for (name, config) in nets {
        let rows = bench_forward(&config, shape, device, Precision::Auto, &[1, 16, 64, 256], &options).expect("bench");
        for r in rows {
            println!(
                "{name:8} batch {:4}: {:9.0} evals/s  {:8.3} ms/batch  ({} passes)",
                r.batch, r.evals_per_sec, r.ms_per_batch, r.iterations
            );
        }
    }
}
