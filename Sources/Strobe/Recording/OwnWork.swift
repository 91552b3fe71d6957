import CStrobe

/// Runs `body` marked as Strobe's own work on the calling thread
/// (`cstrobe_own_work_depth`): a perf test's exact counts leave out what it
/// allocates, retains and releases. Used around the SDK's bookkeeping on an
/// app's thread, whose amount follows the scheduling, not the app's code: a
/// thread's first record, its joining a session (the registry, the CPU
/// profiler's sampler), a chunk taken, a thread's exit.
@inline(__always)
func asOwnWork<Result>(_ body: () throws -> Result) rethrows -> Result {
    cstrobe_own_work_begin()
    defer { cstrobe_own_work_end() }
    return try body()
}
