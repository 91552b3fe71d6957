import Foundation
import Strobe
import StrobeProcessRunner
import StrobeResults
import Synchronization

/// A perf-test suite: an executable that runs its tests and writes a
/// results file.
///
/// ```swift
/// // Sources/LensPerfTests/main.swift
/// import StrobePerf
///
/// let captureFrame = PerfTest("capture frame", metrics: [.interval("capture", .sum)]) { _ in captureOneFrame() }
/// await PerfSuite("LensPipeline", tests: [captureFrame]).main()
/// ```
///
/// Run it with `swift run -c release MyPerfTests [--filter REGEX]
/// [--iterations N] [--warmup K] [--time-budget DURATION] [--p90-precision PCT]
/// [--results-dir DIR] [--tag key=value ...] [--keep-traces] [--round N] [--run-id ID]`;
/// `--help` lists every option with its default. The suite reads its
/// command line itself (``PerfSuiteOptions/parse(_:)``), so an app's perf
/// tests need no package beyond Strobe's.
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
    /// exits: 0 when every test passed (or after printing the help that
    /// `--help` asks for), 1 when one failed, 2 on a bad option, named on
    /// standard error, or when the results cannot be written.
    public func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        let command = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? name
        let status = await runCommandLine(
            arguments, command: command, standardOutput: { print($0) },
            standardError: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        exit(status)
    }

    /// What ``main(arguments:)`` does short of exiting: parses `arguments`,
    /// prints the help or runs the tests, and returns the exit status.
    func runCommandLine(
        _ arguments: [String], command: String, standardOutput: (String) -> Void, standardError: (String) -> Void
    ) async -> Int32 {
        let options: PerfSuiteOptions
        do {
            options = try PerfSuiteOptions.parse(arguments)
        } catch {
            standardError("\(command): \(error)\nRun \(command) --help to see every option.")
            return 2
        }
        if options.helpRequested {
            standardOutput(helpText(command: command))
            return 0
        }
        let environment = ProcessInfo.processInfo.environment
        // A counting child (under Valgrind or QEMU) runs the tests instead of
        // this process, unless this process runs under its engine's tool.
        if let engine = options.instructions.countingProcess().flatMap(InstructionCounter.engine(for:)),
            !engine.runsUnderTool(environment: environment)
        {
            let mode = "--instructions \(options.instructions.rawValue)"
            if let problem = engine.problem(environment: environment) {
                standardError("\(command): \(mode): \(problem); running natively without them")
            } else {
                do {
                    if let status = try engine.launch(arguments: arguments, environment: environment) { return status }
                } catch {
                    standardError("\(command): \(mode): \(error)")
                    return 2
                }
            }
        }
        do {
            let run = try await run(options: options)
            return run.hasFailures ? 1 : 0
        } catch {
            standardError("\(command): \(error)")
            return 2
        }
    }

    /// Why `--instructions simulated` or `emulated` ran no counting
    /// process (callgrind's or QEMU's) and counted natively, when it did.
    static func countingProcessProblem(_ mode: InstructionCounting) -> String? {
        let environment = ProcessInfo.processInfo.environment
        guard let engine = mode.countingProcess().flatMap(InstructionCounter.engine(for:)),
            !engine.runsUnderTool(environment: environment)
        else { return nil }
        return engine.problem(environment: environment)
    }

    /// Whether this process is the simulated one that `--instructions
    /// simulated` starts: every instruction of its measure blocks is
    /// counted, and everything runs 10 to 50 times slower than natively. A
    /// test whose iteration is long may do less work here (the same on both
    /// sides of a comparison), as long as the work it skips is more of the
    /// same.
    public static var runsUnderSimulation: Bool {
        let environment = ProcessInfo.processInfo.environment
        return InstructionCounter.engines.contains { engine in
            guard engine.facts.tool != nil, case .counting = engine.attach(mode: .off, environment: environment)
            else { return false }
            return true
        }
    }

    /// The text `--help` prints: usage, the suite's tests, every option with
    /// its default, and the exit statuses. `command` is the executable's
    /// name.
    public func helpText(command: String) -> String {
        SuiteCommandLine.helpText(command: command, suite: name, tests: tests.map(\.name))
    }

    /// Runs the tests with `options` and writes the results file. Throws a
    /// ``SuiteCommandLineError`` for a bad option (or a `--filter` that
    /// matches no test) and the file system's error when the results cannot
    /// be written; a failing test is recorded in its result instead.
    public func run(options: PerfSuiteOptions) async throws -> PerfRun {
        try options.validate()
        let filter = try options.filterExpression()
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"
        #endif
        var run = PerfRun(
            metadata: .current(
                suite: name, buildConfiguration: configuration, tags: try options.parsedTags(), runID: options.runID,
                round: options.round))
        let instructions = InstructionCounter.make(options.instructions)
        if let engine = instructions.engine {
            run.metadata.instructionSource = engine.facts.mode.rawValue
            run.metadata.simulated = engine.countsOnly
        } else if let note = Self.countingProcessProblem(options.instructions) ?? instructions.note {
            run.metadata.instructionNote = note
            print("instructions: not counted: \(note)")
        }
        var runnerOptions = PerfRunner.Options()
        runnerOptions.instructions = options.instructions
        runnerOptions.suite = name
        runnerOptions.warmupIterations = options.warmup
        runnerOptions.stopRule = try options.stopRule()
        runnerOptions.traceDirectory = options.keepTraces ? options.resultsDirectory + "/traces" : nil
        if let rate = options.profileRate {
            var profile = TraceConfiguration.CPUProfile()
            profile.frequency = rate
            runnerOptions.cpuProfile = profile
        }
        var runner = PerfRunner(options: runnerOptions)
        let progress = ProgressReporter()
        runner.progress = { test, iteration, planned, wall in
            progress.iteration(test: test, index: iteration, planned: planned, wall: wall)
        }
        let selected = tests.filter { test in filter.map { test.name.contains($0) } ?? true }
        if selected.isEmpty {
            throw SuiteCommandLineError(
                flag: "--filter", value: options.filter,
                problem: "matches none of the tests (\(tests.map(\.name).joined(separator: ", ")))")
        }
        for test in selected {
            progress.start(test: test.name)
            let result = await runner.run(test)
            progress.finish(result)
            run.tests.append(result)
        }
        try FileManager.default.createDirectory(atPath: options.resultsDirectory, withIntermediateDirectories: true)
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let file = "\(ResultsFile.fileSafe(name))-\(stamp)-\(getpid()).\(ResultsFile.fileExtension)"
        let path = "\(options.resultsDirectory)/\(file)"
        try ResultsFile.write(run, to: path)
        print("results: \(path)")
        return run
    }
}

/// Progress on a terminal (one line, rewritten) or plain lines elsewhere.
final class ProgressReporter: Sendable {
    private let interactive: Bool
    /// When the current test started, for the time left; its lock also keeps
    /// progress lines from interleaving.
    private let started = Mutex(Date())

    init() {
        interactive = isatty(STDOUT_FILENO) != 0 && ProcessInfo.processInfo.environment["CI"] != "true"
    }

    func start(test: String) {
        started.withLock { $0 = Date() }
        if !interactive { print("\(test): running") }
    }

    func iteration(test: String, index: Int, planned: Int?, wall: Double) {
        guard interactive else { return }
        started.withLock { started in
            let label = index < 0 ? "warm-up" : "iteration \(index + 1)" + (planned.map { "/\($0)" } ?? "")
            var eta = ""
            if let planned, index >= 0 {
                let perIteration = Date().timeIntervalSince(started) / Double(index + 1)
                eta = String(format: ", ETA %.0fs", perIteration * Double(max(planned - index - 1, 0)))
            }
            let line = String(format: "\r%@: %@ (%.2f ms%@)", test, label, wall / 1e6, eta)
            FileHandle.standardOutput.write(Data((line + "\u{1B}[K").utf8))
        }
    }

    func finish(_ result: PerfTestResult) {
        if interactive { FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8)) }
        let wall = result.metric("wall")?.samples.sorted() ?? []
        let median = wall.isEmpty ? 0 : wall[wall.count / 2]
        var line = "\(result.name): \(wall.count) iterations, median wall \(String(format: "%.3f", median / 1e6)) ms"
        if let counted = result.metric("instructions")?.samples.sorted(), !counted.isEmpty {
            if wall.isEmpty { line = "\(result.name): \(counted.count) iterations" }
            line += ", median \(Int64(counted[counted.count / 2])) instructions"
        }
        if let error = result.error { line += ", FAILED: \(error)" }
        print(line)
        if let profile = result.profile { print(Self.profileLine(profile)) }
    }

    /// The functions a test spent most of its CPU time in, by self time:
    /// `  profile: 812 samples; self: Lens.apply(to:rows:into:) 41%, ...`.
    static func profileLine(_ profile: CallStackProfile) -> String {
        let total = profile.cpuPerIteration
        guard total > 0 else { return "  profile: no samples" }
        let top = profile.timePerIteration.filter { $0.value.exclusive > 0 }
            .sorted { ($0.value.exclusive, $1.key) > ($1.value.exclusive, $0.key) }.prefix(3)
        let listed = top.map { name, time in
            "\(name) \(String(format: "%.0f", 100 * time.exclusive / total))%"
        }
        var line = "  profile: \(profile.sampleCount) samples; self: " + listed.joined(separator: ", ")
        if profile.lostSamples > 0 { line += "; \(profile.lostSamples) lost" }
        return line
    }
}
