import ArgumentParser
import Foundation

/// A perf-test suite: an executable that runs its tests and writes a
/// results file.
///
/// ```swift
/// @main struct LensPerfTests {
///     static func main() async {
///         await PerfSuite("LensPipeline", tests: [
///             PerfTest("apply lens", metrics: [.interval("lens apply")]) { ... } measure: { _ in ... },
///         ]).main()
///     }
/// }
/// ```
///
/// Run it with `swift run -c release MyPerfTests [--filter REGEX]
/// [--iterations N] [--warmup K] [--time-budget SECONDS] [--p90-precision PCT]
/// [--output DIR] [--tag key=value ...] [--keep-traces] [--round N] [--run-id ID]`.
public struct PerfSuite: Sendable {
    /// The suite's name.
    public var name: String
    /// Its tests.
    public var tests: [PerfTest]

    /// A suite of `tests`.
    public init(_ name: String, tests: [PerfTest]) {
        self.name = name
        self.tests = tests
    }

    /// Parses the command line, runs the tests, writes the results file and
    /// exits: 0 when every test passed, 1 when one failed, 2 on bad flags.
    public func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        let options: PerfSuiteOptions
        do {
            options = try PerfSuiteOptions.parse(arguments)
        } catch {
            PerfSuiteOptions.exit(withError: error)
        }
        do {
            let run = try await run(options: options)
            exit(run.hasFailures ? 1 : 0)
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(2)
        }
    }

    /// Runs the tests with `options` and writes the results file.
    public func run(options: PerfSuiteOptions) async throws -> PerfRun {
        let filter = try options.filter.map { pattern in
            do {
                return try Regex(pattern)
            } catch {
                throw ValidationError("--filter: invalid regular expression \(pattern): \(error)")
            }
        }
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"
        #endif
        var run = PerfRun(metadata: .current(
            suite: name, buildConfiguration: configuration, tags: try options.parsedTags(), runID: options.runID,
            round: options.round))
        var runnerOptions = PerfRunner.Options()
        runnerOptions.suite = name
        runnerOptions.warmupIterations = options.warmup
        runnerOptions.stopRule = try options.stopRule()
        runnerOptions.traceDirectory = options.keepTraces ? options.output + "/traces" : nil
        var runner = PerfRunner(options: runnerOptions)
        let progress = ProgressReporter()
        runner.progress = { test, iteration, planned, wall in progress.iteration(test: test, index: iteration, planned: planned, wall: wall) }
        let selected = tests.filter { test in filter.map { test.name.contains($0) } ?? true }
        if selected.isEmpty { throw ValidationError("--filter matches none of \(tests.map(\.name))") }
        for test in selected {
            progress.start(test: test.name)
            let result = await runner.run(test)
            progress.finish(result)
            run.tests.append(result)
        }
        try FileManager.default.createDirectory(atPath: options.output, withIntermediateDirectories: true)
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let path = "\(options.output)/\(PerfRunner.fileSafe(name))-\(stamp)-\(getpid()).\(ResultsFile.fileExtension)"
        try ResultsFile.write(run, to: path)
        print("results: \(path)")
        return run
    }
}

/// The command-line flags of a perf suite.
public struct PerfSuiteOptions: ParsableArguments {
    /// Only tests whose names match this regular expression.
    @Option(help: "Run only the tests whose names match this regular expression.")
    public var filter: String?

    /// Measured iterations per test.
    @Option(help: "Measured iterations per test (default 10).")
    public var iterations: Int?

    /// Warm-up iterations per test.
    @Option(help: "Warm-up iterations per test, run and discarded.")
    public var warmup = 2

    /// Iterate for this many seconds per test instead of a count.
    @Option(name: .customLong("time-budget"), help: "Iterate for this many seconds per test.")
    public var timeBudget: Double?

    /// Iterate until the p90's confidence interval is this narrow (percent).
    @Option(name: .customLong("p90-precision"), help: "Iterate until the 95% CI of the p90 of wall time is narrower than this percent of it.")
    public var p90Precision: Double?

    /// Where the results file (and kept traces) go.
    @Option(help: "Directory for the results file.")
    public var output = ".strobe/results"

    /// User tags: `--tag device=pixel --tag build=pr`.
    @Option(name: .customLong("tag"), help: "A key=value dimension recorded with the run; repeatable.")
    public var tags: [String] = []

    /// Keep each iteration's trace.
    @Flag(name: .customLong("keep-traces"), help: "Keep each iteration's trace under OUTPUT/traces.")
    public var keepTraces = false

    /// The round of an interleaved comparison this run belongs to.
    @Option(help: "The round of an interleaved comparison (strobe compare) this run belongs to.")
    public var round: Int?

    /// The run's id; a fresh one when not given.
    @Option(name: .customLong("run-id"), help: "An id for this run (default: a fresh one per process).")
    public var runID: String?

    /// Flags with their defaults.
    public init() {}

    /// The tags as a dictionary.
    public func parsedTags() throws -> [String: String] {
        try Self.parseTags(tags)
    }

    /// `key=value` strings as a dictionary; a clear error names a bad one.
    public static func parseTags(_ tags: [String]) throws -> [String: String] {
        var result: [String: String] = [:]
        for tag in tags {
            guard let equals = tag.firstIndex(of: "="), equals != tag.startIndex else {
                throw ValidationError("--tag \(tag): expected key=value")
            }
            result[String(tag[..<equals])] = String(tag[tag.index(after: equals)...])
        }
        return result
    }

    /// The stop rule the flags ask for.
    public func stopRule() throws -> StopRule {
        let chosen = [iterations != nil, timeBudget != nil, p90Precision != nil].filter { $0 }.count
        guard chosen <= 1 else { throw ValidationError("choose one of --iterations, --time-budget and --p90-precision") }
        if let iterations {
            guard iterations > 0 else { throw ValidationError("--iterations must be positive, not \(iterations)") }
            return .iterations(iterations)
        }
        if let timeBudget {
            guard timeBudget > 0 else { throw ValidationError("--time-budget must be positive, not \(timeBudget)") }
            return .timeBudget(seconds: timeBudget)
        }
        if let p90Precision {
            guard p90Precision > 0 else { throw ValidationError("--p90-precision must be positive, not \(p90Precision)") }
            return .p90Precision(relativeWidth: p90Precision / 100)
        }
        return .iterations(10)
    }

    /// Validates the flags.
    public mutating func validate() throws {
        guard warmup >= 0 else { throw ValidationError("--warmup must be zero or more, not \(warmup)") }
        if let round, round < 0 { throw ValidationError("--round must be zero or more, not \(round)") }
        if let runID, runID.isEmpty { throw ValidationError("--run-id must not be empty") }
        _ = try stopRule()
        _ = try parsedTags()
    }
}

/// Progress on a terminal (one line, rewritten) or plain lines elsewhere.
///
/// `@unchecked Sendable`: its one mutable property, `started`, is read and
/// written only while holding `lock`.
final class ProgressReporter: @unchecked Sendable {
    private let interactive: Bool
    private let lock = NSLock()
    private var started = Date()

    init() {
        interactive = isatty(STDOUT_FILENO) != 0 && ProcessInfo.processInfo.environment["CI"] != "true"
    }

    func start(test: String) {
        lock.lock()
        started = Date()
        lock.unlock()
        if !interactive { print("\(test): running") }
    }

    func iteration(test: String, index: Int, planned: Int?, wall: Double) {
        guard interactive else { return }
        lock.lock()
        defer { lock.unlock() }
        let label = index < 0 ? "warm-up" : "iteration \(index + 1)" + (planned.map { "/\($0)" } ?? "")
        var eta = ""
        if let planned, index >= 0 {
            let perIteration = Date().timeIntervalSince(started) / Double(index + 1)
            eta = String(format: ", ETA %.0fs", perIteration * Double(max(planned - index - 1, 0)))
        }
        let line = String(format: "\r%@: %@ (%.2f ms%@)", test, label, wall / 1e6, eta)
        FileHandle.standardOutput.write(Data((line + "\u{1B}[K").utf8))
    }

    func finish(_ result: PerfTestResult) {
        if interactive { FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8)) }
        let wall = result.metric("wall")?.samples.sorted() ?? []
        let median = wall.isEmpty ? 0 : wall[wall.count / 2]
        var line = "\(result.name): \(wall.count) iterations, median wall \(String(format: "%.3f", median / 1e6)) ms"
        if let error = result.error { line += ", FAILED: \(error)" }
        print(line)
    }
}
