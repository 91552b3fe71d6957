import StrobeResults
import StrobeStatistics

/// What one process kept for one test about where its time went, with where
/// the process stands in the comparison: its CPU samples
/// (``ProcessProfile``, a suite run with `--profile`) or the instructions a
/// simulation counted per function (``ProcessInstructions``).
public struct ProcessFunctionProfile<Profile: Sendable & Hashable>: Sendable, Hashable {
    /// The test's name.
    public var test: String
    /// The process (replicate) the profile came from.
    public var run: String
    /// The round of an interleaved comparison, when there was one.
    public var round: Int?
    /// The run's dimensions, for `--group-by`.
    public var dimensions: [String: String]
    /// The samples or the counts.
    public var profile: Profile

    /// A process's profile of a test.
    public init(test: String, run: String, round: Int?, dimensions: [String: String], profile: Profile) {
        self.test = test
        self.run = run
        self.round = round
        self.dimensions = dimensions
        self.profile = profile
    }
}

/// The CPU samples one process kept for one test (a suite run with
/// `--profile`).
public typealias ProcessProfile = ProcessFunctionProfile<CallStackProfile>

/// The instructions one simulated process counted per function for one
/// test.
public typealias ProcessInstructions = ProcessFunctionProfile<InstructionProfile>
