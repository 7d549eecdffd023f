//! Writes scalars with the trainer's TensorBoard writer and reads them back with the real
//! `tensorboard` Python package (`.venv`, installed by scripts/setup.sh). Without
//! `.venv/bin/python` the test is skipped locally and FAILS when `CI` is set.

use std::path::PathBuf;
use std::process::Command;

use trainer::tensorboard::{tags, TensorBoardLog};

fn venv_python() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    p.exists().then_some(p)
}

#[test]
fn tensorboard_reads_our_scalars() {
    let Some(python) = venv_python() else {
        if std::env::var_os("CI").is_some() {
            panic!(".venv/bin/python is missing: run scripts/setup.sh (CI must run this test)");
        }
        eprintln!("skipping: .venv/bin/python is missing (run scripts/setup.sh)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().join("tb");
    let written: Vec<(&str, u64, f64)> = vec![
        (tags::LOSS_POLICY, 10, 5.25),
        (tags::LOSS_POLICY, 20, 4.5),
        (tags::LOSS_VALUE, 10, 1.0),
        (tags::LOSS_VALUE, 20, 0.75),
        ("eval/score_vs_random", 20, 0.95),
        ("eval/score_vs_greedy", 20, 0.25),
        (tags::LEARNING_RATE, 20, 0.002),
    ];
    {
        let mut tb = TensorBoardLog::new(&logdir).unwrap();
        for &(tag, step, v) in &written {
            tb.scalar(tag, v, step);
        }
        tb.flush();
        // Dropping the writer joins its thread and closes the file.
    }
    let script = r#"
import sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
for tag in sorted(acc.Tags()["scalars"]):
    for e in acc.Scalars(tag):
        print(f"{tag}\t{e.step}\t{e.value!r}")
"#;
    let out = Command::new(&python).arg("-c").arg(script).arg(&logdir).output().expect("run python");
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut read: Vec<(String, u64, f64)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect();
    read.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut want: Vec<(String, u64, f64)> = written.iter().map(|&(t, s, v)| (t.to_string(), s, v)).collect();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(read.len(), want.len(), "read back:\n{text}");
    for (r, w) in read.iter().zip(&want) {
        assert_eq!((&r.0, r.1), (&w.0, w.1));
        assert!((r.2 - w.2).abs() < 1e-6, "{r:?} vs {w:?}");
    }
}
