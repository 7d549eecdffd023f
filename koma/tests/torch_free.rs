//! Cargo, not the linker, keeps the `koma` front free of libtorch: none of its normal
//! dependencies, direct or indirect, is `tch` or `torch-sys`.

use std::process::Command;

#[test]
fn the_front_depends_on_no_torch_crate() {
    let o = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", "koma", "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&o.stderr));
    assert!(tree.lines().any(|l| l.starts_with("koma-rules ")), "not the front's tree:\n{tree}");
    let torch: Vec<&str> =
        tree.lines().filter(|l| ["tch ", "torch-sys ", "koma-model "].iter().any(|name| l.starts_with(name))).collect();
    assert!(torch.is_empty(), "the front reaches {torch:?}:\n{tree}");
}
