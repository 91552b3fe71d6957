import ArgumentParser
import Foundation
import StrobeProcessRunner
import StrobeResults

/// `strobe run -- COMMAND ARGS...`: process-level perf tests.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a command repeatedly and measure it, from its rusage and its trace.",
        discussion: """
            Each iteration launches COMMAND with the environment variable STROBE_TRACE_OUTPUT set to \
            a fresh trace path; a program that calls TraceSession.startFromEnvironment() (or writes \
            Strobe's format itself) records its trace there. The runner waits for the child with wait4 \
            and records, per iteration: wall time and the child's whole rusage (process.cpu.user, \
            process.cpu.system, process.max_rss, process.context_switches.*, process.faults.*), \
            and from the trace the sum and count of every interval name \
            and the last value of every counter. A child that crashes, exits non-zero, runs past \
            --timeout or writes no trace ends the run with a clear error; the results file keeps \
            what was measured, and the command exits 1.
            """
    )

    @Option(help: "Measured iterations.")
    var iterations = 10

    @Option(help: "Warm-up iterations, run and discarded.")
    var warmup = 1

    @Option(name: .customLong("results-dir"), help: "Directory for the results file.")
    var resultsDirectory = ".strobe/results"

    /// The results directory.
    var output: String { resultsDirectory }

    @Option(name: .customLong("tag"), help: "A key=value dimension recorded with the run; repeatable.")
    var tags: [String] = []

    @Option(
        help: "How long an iteration may run before the child is stopped (default: 1m).",
        transform: DurationArgument.parse)
    var timeout = DurationArgument(seconds: 60)

    @Option(help: "The test's name in the results (default: the command's name).")
    var name: String?

    @Flag(name: .customLong("keep-traces"), help: "Keep each iteration's trace under RESULTS_DIR/traces.")
    var keepTraces = false

    @Option(help: "The round of an interleaved comparison (strobe compare) this run belongs to.")
    var round: Int?

    @OptionGroup var history: HistoryDestinationOptions

    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the command to run after --") }
        guard iterations > 0 else { throw ValidationError("--iterations must be positive, not \(iterations)") }
        guard warmup >= 0 else { throw ValidationError("--warmup must be zero or more, not \(warmup)") }
        if let round, round < 0 { throw ValidationError("--round must be zero or more, not \(round)") }
        do {
            _ = try PerfSuiteOptions.parseTags(tags)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        var options = ProcessRunner.Options()
        options.iterations = iterations
        options.warmupIterations = warmup
        options.timeout = timeout.seconds
        options.name = name ?? URL(fileURLWithPath: command[0]).lastPathComponent
        options.traceDirectory = keepTraces ? output + "/traces" : nil
        let result = ProcessRunner(options: options).run(command)
        var tagValues = try PerfSuiteOptions.parseTags(tags)
        if tagValues["build"] == nil, let build = tagValues["build_configuration"] { tagValues["build"] = build }
        var metadata = RunMetadata.current(
            suite: options.name, buildConfiguration: tagValues["build_configuration"] ?? "", tags: tagValues,
            round: round)
        metadata.samplesAreLaunches = true
        let run = PerfRun(metadata: metadata, tests: [result])
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.badInput(
                "--results-dir \(output): cannot create the directory: \(error.localizedDescription)")
        }
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let path = "\(output)/\(options.name)-\(stamp)-\(getpid()).\(ResultsFile.fileExtension)"
        try ResultsFile.write(run, to: path)
        let wall = result.metric("wall")?.samples.sorted() ?? []
        let median = wall.isEmpty ? 0 : wall[wall.count / 2]
        print("\(options.name): \(wall.count) iterations, median wall \(String(format: "%.2f", median / 1e6)) ms")
        print("results: \(path)")
        try history.record([path])
        if let error = result.error {
            throw CommandFailure.measurementFailed("\(options.name): \(error)")
        }
    }
}
