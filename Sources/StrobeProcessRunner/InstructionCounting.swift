/// Where a perf suite counts the user-space instructions of its measure
/// blocks (the `instructions` metric), set by its `--instructions` option.
///
/// Instructions are counted work, not time: the same code on the same input
/// executes the same instructions whatever the machine's neighbours do, so a
/// change of a fraction of a percent is seen in one process. Time metrics
/// stay the judge of what instructions do not see (waiting, I/O, contention,
/// the memory system).
public enum InstructionCounting: String, Sendable, Hashable, CaseIterable {
    /// The CPU's hardware counter where the machine has one, nothing where
    /// it does not (most virtual machines expose none).
    case auto
    /// The hardware counter; where there is none, the run says why and goes
    /// on with its other metrics.
    case hardware
    /// A simulation: the suite runs again under Valgrind's callgrind, which
    /// counts every instruction of the measure blocks (and per function).
    /// That process's times say nothing of the code's speed, so its results
    /// carry counts only; where Valgrind cannot run, the run says why and
    /// goes on natively.
    case simulated
    /// No instruction count.
    case off
}
