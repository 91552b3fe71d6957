import StrobeResults

/// The CPU samples one process kept for one test (a suite run with
/// `--profile`), with where the process stands in the comparison.
public struct ProcessProfile: Sendable, Hashable {
    /// The test's name.
    public var test: String
    /// The process (replicate) the samples came from.
    public var run: String
    /// The round of an interleaved comparison, when there was one.
    public var round: Int?
    /// The run's dimensions, for `--group-by`.
    public var dimensions: [String: String]
    /// The samples.
    public var profile: CallStackProfile

    /// A process's profile of a test.
    public init(
        test: String, run: String, round: Int?, dimensions: [String: String], profile: CallStackProfile
    ) {
        self.test = test
        self.run = run
        self.round = round
        self.dimensions = dimensions
        self.profile = profile
    }
}

/// The instructions one simulated process counted per function for one
/// test, with where the process stands in the comparison.
public struct ProcessInstructions: Sendable, Hashable {
    /// The test's name.
    public var test: String
    /// The process (replicate) that counted them.
    public var run: String
    /// The round of an interleaved comparison, when there was one.
    public var round: Int?
    /// The run's dimensions, for `--group-by`.
    public var dimensions: [String: String]
    /// The counts.
    public var profile: InstructionProfile

    /// A process's instruction counts of a test.
    public init(
        test: String, run: String, round: Int?, dimensions: [String: String], profile: InstructionProfile
    ) {
        self.test = test
        self.run = run
        self.round = round
        self.dimensions = dimensions
        self.profile = profile
    }
}
