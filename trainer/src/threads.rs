//! libtorch's CPU threads, set in one place for every trainer process.

use model::tch;

/// Sets libtorch's CPU threads: `torch_threads` if set, else half the cores when the
/// learner and the batcher share a small CPU.
pub fn set_torch_threads(torch_threads: usize) {
    if torch_threads > 0 {
        tch::set_num_threads(torch_threads as i32);
    } else {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores <= 8 {
            tch::set_num_threads((cores / 2).max(1) as i32);
        }
    }
}
