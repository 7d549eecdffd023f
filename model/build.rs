//! Link-time set-up for libtorch (see also `.cargo/config.toml` at the workspace root).
//!
//! torch-sys (a direct dependency, `links = "tch"`) tells us where the libtorch it linked
//! against lives through `DEP_TCH_LIBTORCH_LIB`. We use it for three things:
//!
//! 1. `rustc-link-arg`s for this package's own test, bench and example binaries: an
//!    absolute rpath to that folder (so `target/debug/deps/<test>` runs without
//!    LD_LIBRARY_PATH wherever CARGO_TARGET_DIR points) and
//!    `--push-state --no-as-needed -ltorch_cuda --pop-state`: libtorch_cuda.so registers
//!    the CUDA backend from static initialisers only, nothing references its symbols, and
//!    the default `--as-needed` would drop it. Cargo applies `rustc-link-arg` to the
//!    emitting package's own targets only, never to dependents.
//! 2. For dependents (the `koma` CLI, the USI engine, ...), which no link argument of ours
//!    can reach, the cfg `koma_torch_cuda`: `src/torch_link.rs` then takes the address of a
//!    real libtorch_cuda symbol from code that every network user runs, so the linker keeps
//!    libtorch_cuda.so as DT_NEEDED of every final binary, `--as-needed` or not. Their rpath
//!    comes from `.cargo/config.toml` (`$ORIGIN`-relative, through `.venv/torch-lib`).
//! 3. `KOMA_LIBTORCH_LIB` (compile-time env) so the library can report where it was built
//!    against (`koma_model::torch_info`).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo::rustc-check-cfg=cfg(koma_torch_cuda)");

    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let lib = match std::env::var_os("DEP_TCH_LIBTORCH_LIB") {
        Some(lib) => PathBuf::from(lib),
        None => {
            println!("cargo:warning=DEP_TCH_LIBTORCH_LIB not set by torch-sys: no rpath embedded");
            println!("cargo:rustc-env=KOMA_LIBTORCH_LIB=");
            return;
        }
    };
    println!("cargo:rustc-env=KOMA_LIBTORCH_LIB={}", lib.display());
    if target_os != "linux" {
        return;
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    if lib.join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-cfg=koma_torch_cuda");
        println!("cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,-ltorch_cuda,--pop-state");
    }
}
