//! The one thread policy for libtorch's CPU work (intra-op threads), used by every program
//! that runs networks: a count asked for wins; otherwise the cores are shared as the
//! caller's set-up needs.

/// How the caller's passes share the CPU when no thread count is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuShare {
    /// Passes have the machine to themselves: libtorch's own default (every core).
    Whole,
    /// Half the cores on a small machine (8 cores or fewer), libtorch's default on larger
    /// ones. For a learner's passes next to a batcher's, which would otherwise wait on each
    /// other in torch's thread pool; and for koma-usi, whose small batches gain nothing from
    /// a second torch thread on a small CPU (docs/performance.md).
    HalfOfSmall,
    /// Up to this many passes at once (the arena: one per game or network in flight):
    /// the cores split between them, at least one each.
    Split(usize),
}

/// The thread count [`set_torch_threads`] sets on a machine of `cores` cores, `None` to
/// leave libtorch's default.
pub fn torch_threads(requested: usize, share: CpuShare, cores: usize) -> Option<usize> {
    if requested > 0 {
        return Some(requested);
    }
    match share {
        CpuShare::Whole => None,
        CpuShare::HalfOfSmall => (cores <= 8).then_some((cores / 2).max(1)),
        CpuShare::Split(passes) => Some((cores / passes.max(1)).max(1)),
    }
}

/// Sets libtorch's CPU threads: `requested` if not 0, else as `share` says (see
/// [`torch_threads`]). Returns the count set, `None` where libtorch's default stays.
pub fn set_torch_threads(requested: usize, share: CpuShare) -> Option<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = torch_threads(requested, share, cores)?;
    tch::set_num_threads(i32::try_from(threads).unwrap_or(i32::MAX));
    Some(threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requested_count_wins_whatever_the_share() {
        for share in [CpuShare::Whole, CpuShare::HalfOfSmall, CpuShare::Split(4)] {
            assert_eq!(torch_threads(3, share, 16), Some(3));
        }
    }

    #[test]
    fn half_of_a_small_machine_and_the_default_on_a_large_one() {
        assert_eq!(torch_threads(0, CpuShare::HalfOfSmall, 2), Some(1));
        assert_eq!(torch_threads(0, CpuShare::HalfOfSmall, 1), Some(1));
        assert_eq!(torch_threads(0, CpuShare::HalfOfSmall, 8), Some(4));
        assert_eq!(torch_threads(0, CpuShare::HalfOfSmall, 16), None);
        assert_eq!(torch_threads(0, CpuShare::Whole, 2), None);
    }

    #[test]
    fn split_gives_each_pass_its_share_and_at_least_one() {
        assert_eq!(torch_threads(0, CpuShare::Split(4), 16), Some(4));
        assert_eq!(torch_threads(0, CpuShare::Split(3), 2), Some(1));
        assert_eq!(torch_threads(0, CpuShare::Split(0), 6), Some(6));
    }

    #[test]
    fn setting_it_reaches_libtorch() {
        assert_eq!(set_torch_threads(1, CpuShare::Whole), Some(1));
        assert_eq!(tch::get_num_threads(), 1);
    }
}
