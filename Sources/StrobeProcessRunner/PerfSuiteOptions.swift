/// The command-line options of a perf suite, with their defaults.
///
/// ``parse(_:)`` reads them from a command line (see ``PerfSuite`` for the
/// flags); set them directly to run a suite from code with
/// ``PerfSuite/run(options:)``.
public struct PerfSuiteOptions: Sendable, Hashable {
    /// The measured iterations per test when no stop rule is given.
    public static let defaultIterations = 10

    /// Only tests whose names match this regular expression (`--filter`).
    public var filter: String?
    /// Measured iterations per test (`--iterations`); nil with no stop rule
    /// given takes ``defaultIterations``.
    public var iterations: Int?
    /// Warm-up iterations per test, run and discarded (`--warmup`).
    public var warmup = 2
    /// Iterate for this many seconds per test instead of a count
    /// (`--time-budget`).
    public var timeBudget: Double?
    /// Iterate until the 95% confidence interval of the p90 of wall time is
    /// narrower than this percentage of it (`--p90-precision`).
    public var p90Precision: Double?
    /// Where the results file (and kept traces) go (`--output`).
    public var output = ".strobe/results"
    /// User tags, `key=value` each (`--tag device=pixel --tag build=pr`).
    public var tags: [String] = []
    /// Keep each iteration's trace under `output/traces` (`--keep-traces`).
    public var keepTraces = false
    /// Sample every measured iteration's call stacks at this rate, in
    /// hertz, and keep them per test in the results (`--profile`,
    /// `--profile-rate HZ`); nil for no profile.
    public var profileRate: Int?
    /// The rate `--profile` samples at: 999 Hz, off the kernel's tick.
    public static let defaultProfileRate = 999
    /// Where the measure blocks' instructions are counted
    /// (`--instructions auto|hardware|simulated|emulated|off`).
    public var instructions: InstructionCounting = .auto
    /// The round of an interleaved comparison this run belongs to
    /// (`--round`).
    public var round: Int?
    /// The run's id (`--run-id`); a fresh one per process when nil.
    public var runID: String?
    /// Whether the command line asked for help (`--help`, `-h`): the suite
    /// prints ``PerfSuite/helpText(command:)`` and runs nothing.
    public var helpRequested = false

    /// Every option at its default.
    public init() {}

    /// The tags as a dictionary.
    public func parsedTags() throws(SuiteCommandLineError) -> [String: String] {
        try Self.parseTags(tags)
    }

    /// `key=value` strings as a dictionary; an error names a bad one.
    public static func parseTags(_ tags: [String]) throws(SuiteCommandLineError) -> [String: String] {
        var result: [String: String] = [:]
        for tag in tags {
            guard let equals = tag.firstIndex(of: "="), equals != tag.startIndex else {
                throw SuiteCommandLineError(flag: "--tag", value: tag, problem: "expected key=value")
            }
            result[String(tag[..<equals])] = String(tag[tag.index(after: equals)...])
        }
        return result
    }

    /// The stop rule the options ask for: at most one of `iterations`,
    /// `timeBudget` and `p90Precision`, ``defaultIterations`` when none.
    public func stopRule() throws(SuiteCommandLineError) -> StopRule {
        let given = [
            iterations.map { ("--iterations", "\($0)") },
            timeBudget.map { ("--time-budget", Self.shown($0)) },
            p90Precision.map { ("--p90-precision", Self.shown($0)) },
        ].compactMap { $0 }
        if given.count > 1 {
            throw SuiteCommandLineError(
                flag: given[1].0, value: given[1].1,
                problem:
                    "conflicts with \(given[0].0) \(given[0].1): choose one of --iterations, --time-budget and --p90-precision"
            )
        }
        if let iterations {
            guard iterations > 0 else {
                throw SuiteCommandLineError(flag: "--iterations", value: "\(iterations)", problem: "must be positive")
            }
            return .iterations(iterations)
        }
        if let timeBudget {
            guard timeBudget > 0 else {
                throw SuiteCommandLineError(
                    flag: "--time-budget", value: Self.shown(timeBudget), problem: "must be positive")
            }
            return .timeBudget(seconds: timeBudget)
        }
        if let p90Precision {
            guard p90Precision > 0 else {
                throw SuiteCommandLineError(
                    flag: "--p90-precision", value: Self.shown(p90Precision), problem: "must be positive")
            }
            return .p90Precision(relativeWidth: p90Precision / 100)
        }
        return .iterations(Self.defaultIterations)
    }

    /// The `filter` as a regular expression; nil when none is set.
    public func filterExpression() throws(SuiteCommandLineError) -> Regex<AnyRegexOutput>? {
        guard let filter else { return nil }
        do {
            return try Regex(filter)
        } catch {
            throw SuiteCommandLineError(flag: "--filter", value: filter, problem: "not a regular expression: \(error)")
        }
    }

    /// Checks every option; the error names the first bad one.
    public func validate() throws(SuiteCommandLineError) {
        _ = try filterExpression()
        _ = try stopRule()
        guard warmup >= 0 else {
            throw SuiteCommandLineError(flag: "--warmup", value: "\(warmup)", problem: "must be zero or more")
        }
        if output.isEmpty { throw SuiteCommandLineError(flag: "--output", value: output, problem: "must not be empty") }
        _ = try parsedTags()
        if let round, round < 0 {
            throw SuiteCommandLineError(flag: "--round", value: "\(round)", problem: "must be zero or more")
        }
        if let profileRate, !(1...10_000).contains(profileRate) {
            throw SuiteCommandLineError(
                flag: "--profile-rate", value: "\(profileRate)", problem: "must be from 1 to 10000 (hertz)")
        }
        if let runID, runID.isEmpty {
            throw SuiteCommandLineError(flag: "--run-id", value: runID, problem: "must not be empty")
        }
    }

    /// The command-line arguments that give a suite these options: each
    /// option that differs from its default, in the table's order
    /// (`--filter`, `--iterations`, `--warmup`, ..., `--run-id`), as
    /// `--name value` pairs. What a runner of suites (`strobe compare`)
    /// appends to the suite's own command.
    public var arguments: [String] {
        let defaults = PerfSuiteOptions()
        var arguments: [String] = []
        if let filter { arguments += ["--filter", filter] }
        if let iterations { arguments += ["--iterations", "\(iterations)"] }
        if warmup != defaults.warmup { arguments += ["--warmup", "\(warmup)"] }
        if let timeBudget { arguments += ["--time-budget", Self.shown(timeBudget)] }
        if let p90Precision { arguments += ["--p90-precision", Self.shown(p90Precision)] }
        if output != defaults.output { arguments += ["--output", output] }
        for tag in tags { arguments += ["--tag", tag] }
        if keepTraces { arguments.append("--keep-traces") }
        if let profileRate {
            arguments += profileRate == Self.defaultProfileRate ? ["--profile"] : ["--profile-rate", "\(profileRate)"]
        }
        if instructions != defaults.instructions { arguments += ["--instructions", instructions.rawValue] }
        if let round { arguments += ["--round", "\(round)"] }
        if let runID { arguments += ["--run-id", runID] }
        return arguments
    }

    /// A number as a user would have typed it: `2`, not `2.0`.
    static func shown(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
}
