/// What runs the processes of an ``InterleavedComparison``: one process of
/// each side per round, each writing its results files into its side's
/// directory, where the comparison reads them at each look.
///
/// ``ProcessRounds`` runs real programs; a test can run none and write
/// results files of its own.
public protocol RoundRunner {
    /// The directory holding `side`'s results files.
    func resultsDirectory(of side: ComparisonSide) -> String

    /// Whether a round can run some tests only (a perf suite takes
    /// `--filter`; a program measured per launch is one test).
    var runsSelectedTests: Bool { get }

    /// Runs round `round`: one process of each side, in `order`, running
    /// the tests named in `tests`, or every test when nil.
    mutating func runRound(_ round: Int, order: [ComparisonSide], tests: [String]?) throws(ComparisonFailure)

    /// The iterations each process measures, where the runner lets the
    /// comparison choose them (a perf suite's `--iterations`); nil where it
    /// does not (a program measured per launch).
    var iterationsPerProcess: Int? { get set }

    /// Seconds spent in processes that are no round's (a simulation that
    /// counts instructions), left out of the rounds' pace.
    var countingSeconds: Double { get }

    /// Runs, before round 1, the processes that count instructions where
    /// no hardware counter does, running the tests named in `tests` (every
    /// test when nil); true when their counts are in the sides'
    /// directories.
    mutating func countBeforeRounds(tests: [String]?) throws(ComparisonFailure) -> Bool
}

extension RoundRunner {
    /// None.
    public var countingSeconds: Double { 0 }

    /// Counts nothing.
    public mutating func countBeforeRounds(tests: [String]?) throws(ComparisonFailure) -> Bool { false }
}
