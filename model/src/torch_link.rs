//! Keeps libtorch_cuda.so linked into every binary that uses this crate.
//!
//! libtorch_cuda.so registers the CUDA backend from static initialisers; nothing calls into
//! it directly, so the linker's default `--as-needed` drops it from the final binaries and
//! CUDA then reports "not available" even on a GPU machine. A `-Wl,--no-as-needed` link arg
//! only reaches the emitting package's own binaries (cargo never forwards `rustc-link-arg`
//! to dependents), so instead we take the address of a real exported symbol of
//! libtorch_cuda (`at::cuda::warp_size()`, never called) in [`anchor`], which every path
//! that builds a network or an evaluator runs. An undefined reference from a regular
//! object is what makes GNU ld / lld keep the DT_NEEDED entry. `build.rs` sets the cfg
//! `koma_torch_cuda` only when the linked libtorch has libtorch_cuda.so (a CPU-only
//! libtorch lacks it and then nothing is referenced).

#[cfg(koma_torch_cuda)]
extern "C" {
    // at::cuda::warp_size(); C++ mangled name, exported by libtorch_cuda.so.
    #[link_name = "_ZN2at4cuda9warp_sizeEv"]
    fn at_cuda_warp_size() -> i32;
}

/// Cheap; call it from constructors. Never calls into CUDA.
#[inline(never)]
pub(crate) fn anchor() {
    #[cfg(koma_torch_cuda)]
    {
        let f: unsafe extern "C" fn() -> i32 = at_cuda_warp_size;
        std::hint::black_box(f as usize);
    }
}

/// Whether this build linked a libtorch with the CUDA backend.
pub(crate) const CUDA_BACKEND_LINKED: bool = cfg!(koma_torch_cuda);
