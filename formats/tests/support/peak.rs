//! The memory a piece of work holds at most, counted by [`PeakAlloc`] (which the test or
//! bench binary sets as its global allocator).

pub use peak_alloc::PeakAlloc;

/// Runs `work` and returns its result with the most bytes held meanwhile beyond what
/// was held before.
pub fn peak_of<T>(allocator: &PeakAlloc, work: impl FnOnce() -> T) -> (T, usize) {
    let before = allocator.current_usage();
    allocator.reset_peak_usage();
    let result = work();
    (result, allocator.peak_usage().saturating_sub(before))
}
