import Foundation
import StrobeProcessRunner
import StrobeResults

/// The processes of a `strobe compare`, run for real: a results directory
/// per side, and in each round one process of each side.
public struct ProcessRounds: RoundRunner {
    /// What a command is.
    public enum Mode: Sendable, Hashable {
        /// A perf-suite executable (`PerfSuite`): it is given the suite
        /// options ``PerfSuiteOptions/arguments`` spells (`--results-dir`,
        /// `--iterations`, `--round`, and `--warmup`, `--filter` and
        /// `--profile` where asked).
        case suite
        /// Any program, measured per launch under the test name given.
        case perLaunch(name: String)
    }

    /// The directory the sides' results and the logs go under.
    public let root: String
    /// Each side's command line, run through `/bin/sh -c`.
    public let commands: [ComparisonSide: String]
    /// What the commands are.
    public let mode: Mode
    /// Measured iterations per suite process; the comparison may change
    /// them from round to round (see ``iterationsPerProcess``).
    public private(set) var iterations: Int
    /// Warm-up iterations per suite process (nil: the suite's own), or
    /// warm-up launches per side before round 1 (nil: 1).
    public let warmup: Int?
    /// Seconds one process may run before it is stopped.
    public let timeout: Double
    /// Whether suite processes sample their measure blocks (`--profile`).
    public let profile: Bool
    /// Where suite processes count instructions. `.simulated` runs, before
    /// round 1, one more process of each side under simulation (both at
    /// once, each on a core of its own), which counts them and names the
    /// functions; `.emulated` does the same under QEMU's emulator, faster
    /// but with no functions; `.auto` does either where the short native
    /// process before them found no hardware counter: the simulation where
    /// its tests predict it takes at most ``simulationBudget``, else the
    /// emulation where QEMU is installed (see ``countBeforeRounds(tests:)``).
    /// Native processes then count none, so that the sources never mix.
    public let instructions: InstructionCounting
    /// Measured iterations of a counting process: two, so that a count
    /// that is not the same in every iteration shows, where the short
    /// native process's slowest test took under ``longIteration`` per
    /// iteration; one where
    /// it took longer (a simulation runs 20 to 100 times slower than
    /// native, so two iterations of a 300 ms test would take a minute).
    public static let countingIterations = 2
    /// The wall time per iteration past which a counting process
    /// measures one iteration: 20 ms, in nanoseconds.
    public static let longIteration = 20e6
    /// Seconds a simulation of one side may be predicted to take for
    /// `.auto` to choose it over the emulation: 20.
    public static let simulationBudget = 20.0
    /// How many times slower than natively a measured iteration runs under
    /// callgrind, for the prediction: 60 (19 to 93 measured here).
    static let simulationSlowdown = 60.0
    /// How the run ids of counting processes begin (the word results
    /// files have always carried).
    static let countingRunPrefix = "simulated-"
    /// Seconds the counting processes took, which are no round's pace.
    public private(set) var countingSeconds = 0.0
    /// What became of instruction counting: which source, or why none.
    public private(set) var instructionNote: String?
    private var countingProcessesRan = false

    /// Rounds in `directory` (`baseline/`, `candidate/` and `logs/`, made
    /// here; a side's directory that already holds files is refused).
    public init(
        directory: String, commands: [ComparisonSide: String], mode: Mode, iterations: Int, warmup: Int?,
        timeout: Double, profile: Bool = false, instructions: InstructionCounting = .auto
    ) throws(ComparisonFailure) {
        root = directory
        self.instructions = instructions
        self.commands = commands
        self.mode = mode
        self.iterations = iterations
        self.warmup = warmup
        self.timeout = timeout
        self.profile = profile
        let files = FileManager.default
        for side in ComparisonSide.allCases {
            let path = "\(directory)/\(side.rawValue)"
            if let existing = try? files.contentsOfDirectory(atPath: path), !existing.isEmpty {
                throw ComparisonFailure(
                    "--results-dir \(directory): \(path) already holds results; remove it or choose another directory")
            }
        }
        do {
            for side in ComparisonSide.allCases {
                try files.createDirectory(atPath: "\(directory)/\(side.rawValue)", withIntermediateDirectories: true)
            }
            try files.createDirectory(atPath: "\(directory)/logs", withIntermediateDirectories: true)
        } catch {
            throw ComparisonFailure("--results-dir \(directory): cannot create it: \(error.localizedDescription)")
        }
    }

    public func resultsDirectory(of side: ComparisonSide) -> String { "\(root)/\(side.rawValue)" }

    public var runsSelectedTests: Bool {
        if case .suite = mode { return true }
        return false
    }

    public var iterationsPerProcess: Int? {
        get { runsSelectedTests ? iterations : nil }
        set { if let newValue, runsSelectedTests { iterations = max(newValue, 1) } }
    }

    /// Where each process's output goes.
    public var logDirectory: String { "\(root)/logs" }

    public mutating func runRound(_ round: Int, order: [ComparisonSide], tests: [String]?) throws(ComparisonFailure) {
        if round == 1, case .perLaunch = mode {
            for side in order { try warmUpLaunches(side) }
        }
        for side in order { try run(side, round: round, tests: tests) }
    }

    /// Before round 1: one short native process of the baseline (one
    /// iteration of each test, no warm-up, its results kept apart) tells
    /// whether a hardware counter counts and how long each test takes;
    /// where none counts, the counting processes run now, so that their
    /// counts are told before the rounds of times begin.
    public mutating func countBeforeRounds(tests: [String]?) throws(ComparisonFailure) -> Bool {
        guard case .suite = mode, instructions != .off, instructions != .hardware else { return false }
        let start = Date()
        defer { countingSeconds += Date().timeIntervalSince(start) }
        return try countInstructions(tests: tests, measuredBy: probe(tests: tests))
    }

    /// The short native process of the baseline (or the only side) that
    /// precedes the counting processes, read back.
    private func probe(tests: [String]?) throws(ComparisonFailure) -> PerfRun {
        guard let side = ComparisonSide.allCases.first(where: { commands[$0] != nil }), let command = commands[side]
        else { throw ComparisonFailure("no command to run") }
        let directory = "\(logDirectory)/probe"
        var options = suiteOptions(side, round: 1, tests: tests)
        options.resultsDirectory = directory
        options.iterations = 1
        options.warmup = 0
        options.profileRate = nil
        options.runID = "probe-\(side.rawValue)-\(UInt32.random(in: 0...UInt32.max))"
        let line = Self.shellLine(command, options)
        let log = "\(logDirectory)/probe-\(side.rawValue).log"
        let status = try Self.runShell(line, log: log, timeout: timeout)
        guard status == 0, let path = Self.resultsFiles(in: directory).first else {
            throw ComparisonFailure(
                "the \(side.rawValue)'s first process exited with status \(status): \(command)\n" + Self.tail(of: log))
        }
        do throws(ResultsFileError) {
            return try ResultsFile.read(path)
        } catch {
            throw ComparisonFailure(error.description)
        }
    }

    /// Whether and how instructions are counted, judged from `probe`, and
    /// the counting processes that count them where no hardware counter
    /// did; true when those ran.
    private mutating func countInstructions(
        tests: [String]?, measuredBy probe: PerfRun
    ) throws(ComparisonFailure) -> Bool {
        let sources = Set([probe.metadata.instructionSource])
        // The probe's wall time per iteration of each test.
        let medians = [probe].map { run in
            run.tests.compactMap { test -> Double? in
                guard let wall = test.metric("wall")?.samples.sorted(), !wall.isEmpty else { return nil }
                return wall[wall.count / 2]
            }
        }
        let slowest = medians.joined().max() ?? 0
        let iterations = slowest < Self.longIteration ? Self.countingIterations : 1
        if sources.contains(CountingEngine.hardwareCounter.mode.rawValue) {
            instructionNote = "instructions: counted by the CPU's hardware counter"
            return false
        }
        // What one side's simulation would take: each test's median
        // iteration, measured `iterations` times 60 times slower.
        let perSide = medians.map { $0.reduce(0, +) }.max() ?? 0
        let predicted = perSide * 1e-9 * Self.simulationSlowdown * Double(iterations)
        guard instructions != .hardware, instructions != .off else { return false }
        let relaunching = CountingEngine.all.filter { $0.tool != nil }
        let candidates = CountingProcessCandidates(
            predictedSimulationSeconds: predicted, simulationBudget: Self.simulationBudget,
            installed: relaunching.filter { $0.isInstalled() })
        guard let mode = instructions.countingProcess(candidates: candidates), let engine = mode.engine else {
            let tools = relaunching.compactMap(\.tool)
            instructionNote =
                "instructions: not counted: no hardware counter here, and neither "
                + tools.map(\.name).joined(separator: " nor ") + ", which would count them, is installed "
                + "(apt-get install \(tools.map(\.package).joined(separator: " ")))"
            return false
        }
        countingProcessesRan = true
        var failures: [ComparisonFailure?] = [nil, nil]
        let lines = ComparisonSide.allCases.map { side -> (String, String)? in
            guard let command = commands[side] else { return nil }
            var options = suiteOptions(side, round: 1, tests: tests)
            options.instructions = mode
            options.iterations = iterations
            options.warmup = 1
            options.runID = "\(Self.countingRunPrefix)\(side.rawValue)-\(UInt32.random(in: 0...UInt32.max))"
            let line = Self.shellLine(command, options)
            return (line, "\(logDirectory)/simulated-\(side.rawValue).log")
        }
        let timeout = self.timeout
        let results = FailureSlots(failures)
        DispatchQueue.concurrentPerform(iterations: lines.count) { index in
            guard let (line, log) = lines[index] else { return }
            do throws(ComparisonFailure) {
                let status = try Self.runShell(line, log: log, timeout: timeout)
                if status != 0 {
                    results.set(
                        index,
                        ComparisonFailure(
                            "a counting process exited with status \(status): \(line)\n"
                                + Self.tail(of: log)))
                }
            } catch {
                results.set(index, error)
            }
        }
        failures = results.values
        if let failure = failures.compactMap({ $0 }).first { throw failure }
        // A suite that could not start its counting process ran natively and said why: its
        // results are no round's and go.
        var notes: [String] = []
        for side in ComparisonSide.allCases {
            for path in Self.resultsFiles(in: resultsDirectory(of: side)) {
                guard let run = try? ResultsFile.read(path), run.metadata.runID.hasPrefix(Self.countingRunPrefix),
                    !run.metadata.simulated
                else { continue }
                try? FileManager.default.removeItem(atPath: path)
                let note = run.metadata.instructionNote
                notes.append(note.isEmpty ? "the suite ran no counting process" : note)
            }
        }
        var counted = "\(engine.method) (\(engine.name)"
        if !engine.namesFunctions, let naming = CountingEngine.all.first(where: \.namesFunctions) {
            counted += "; no counts per function: --instructions \(naming.mode.rawValue) names them"
        }
        counted += ")"
        instructionNote =
            notes.first.map { "instructions: not counted: \($0)" }
            ?? "instructions: counted by \(counted), \(iterations) iteration\(iterations == 1 ? "" : "s") per side"
        return notes.isEmpty
    }

    /// `command` followed by the suite `options`, quoted for /bin/sh.
    static func shellLine(_ command: String, _ options: PerfSuiteOptions) -> String {
        ([command] + options.arguments.map(shellQuoted)).joined(separator: " ")
    }

    /// The results files in `directory`.
    static func resultsFiles(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix("." + ResultsFile.fileExtension) }.sorted().map { "\(directory)/\($0)" }
    }

    /// The options a suite process of `side` in round `round` is given.
    func suiteOptions(_ side: ComparisonSide, round: Int, tests: [String]?) -> PerfSuiteOptions {
        var options = PerfSuiteOptions()
        options.resultsDirectory = resultsDirectory(of: side)
        options.iterations = iterations
        options.round = round
        if let warmup { options.warmup = warmup }
        if let tests, !tests.isEmpty { options.filter = Self.exactNames(tests) }
        if profile { options.profileRate = PerfSuiteOptions.defaultProfileRate }
        // Once a counting process counts instructions, native processes count none.
        options.instructions =
            countingProcessesRan || instructions.countingProcess() != nil ? .off : instructions
        return options
    }

    private func run(_ side: ComparisonSide, round: Int, tests: [String]?) throws(ComparisonFailure) {
        guard let command = commands[side] else { return }
        switch mode {
        case .suite:
            // Without --warmup the suite keeps its own: an option at its
            // default is not spelled.
            let options = suiteOptions(side, round: round, tests: tests)
            let line = Self.shellLine(command, options)
            let log = "\(logDirectory)/round-\(round)-\(side.rawValue).log"
            let status = try Self.runShell(line, log: log, timeout: timeout)
            guard status == 0 else {
                throw ComparisonFailure(
                    "the \(side.rawValue) (round \(round)) exited with status \(status): \(command)\n"
                        + Self.tail(of: log))
            }
        case .perLaunch(let name):
            let result = try launch(
                command, name: name, iterations: 1, warmup: 0,
                log: "\(logDirectory)/round-\(round)-\(side.rawValue).log",
                failing: "the \(side.rawValue) (round \(round))")
            let metadata = RunMetadata.current(
                suite: name, buildConfiguration: "", tags: ["side": side.rawValue], round: round)
            let path =
                "\(resultsDirectory(of: side))/\(ResultsFile.fileSafe(name))-round-\(round)."
                + "\(ResultsFile.fileExtension)"
            do throws(ResultsFileError) {
                try ResultsFile.write(PerfRun(metadata: metadata, tests: [result]), to: path)
            } catch {
                throw ComparisonFailure(error.description)
            }
        }
    }

    private func warmUpLaunches(_ side: ComparisonSide) throws(ComparisonFailure) {
        guard let command = commands[side], (warmup ?? 1) > 0 else { return }
        _ = try launch(
            command, iterations: 0, warmup: warmup ?? 1, log: "\(logDirectory)/warm-up-\(side.rawValue).log",
            failing: "the \(side.rawValue)'s warm-up")
    }

    /// Launches `command` through /bin/sh `warmup` times unmeasured, then
    /// `iterations` times measured (as test `name`, when given), its output in `log`; a
    /// launch that fails fails the comparison, as `failing` ("the baseline
    /// (round 3)") failed.
    private func launch(
        _ command: String, name: String? = nil, iterations: Int, warmup: Int, log: String,
        failing: String
    ) throws(ComparisonFailure) -> PerfTestResult {
        var options = ProcessRunner.Options()
        options.iterations = iterations
        options.warmupIterations = warmup
        options.timeout = timeout
        if let name { options.name = name }
        options.requiresTrace = false
        let result = ProcessRunner(options: options).run(["/bin/sh", "-c", Self.redirected(command, to: log)])
        if let error = result.error {
            throw ComparisonFailure("\(failing) failed: \(error): \(command)\n" + Self.tail(of: log))
        }
        return result
    }

    /// Runs `line` through /bin/sh with its output in `log`; stops it after
    /// `timeout` seconds (SIGTERM, then SIGKILL).
    static func runShell(_ line: String, log: String, timeout: Double) throws(ComparisonFailure) -> Int32 {
        guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log)
        else {
            throw ComparisonFailure("cannot write the log \(log)")
        }
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", line]
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            throw ComparisonFailure("cannot start /bin/sh -c \(line): \(error.localizedDescription)")
        }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            if finished.wait(timeout: .now() + 2) == .timedOut { kill(process.processIdentifier, SIGKILL) }
            finished.wait()
            throw ComparisonFailure("stopped after the \(Int(timeout)) s timeout: \(line)\n" + tail(of: log))
        }
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// The last lines of a log, indented, for an error message.
    static func tail(of log: String, lines: Int = 15) -> String {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let last = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines)
        return "  log \(log):\n" + last.map { "  | " + $0 }.joined(separator: "\n")
    }

    /// `command` with its output appended to `log`: the same few
    /// microseconds of shell work on both sides.
    static func redirected(_ command: String, to log: String) -> String {
        "exec >>\(shellQuoted(log)) 2>&1\n\(command)"
    }

    /// A regular expression matching exactly `names`: `^(a|b)$`.
    static func exactNames(_ names: [String]) -> String {
        let escaped = names.map { name in
            String(name.flatMap { "\\^$.|?*+()[]{}".contains($0) ? ["\\", $0] : [$0] })
        }
        return "^(" + escaped.joined(separator: "|") + ")$"
    }

    /// Results of concurrent work, one slot each, behind a lock.
    private final class FailureSlots: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [ComparisonFailure?]

        init(_ slots: [ComparisonFailure?]) { self.slots = slots }

        func set(_ index: Int, _ value: ComparisonFailure) { lock.withLock { slots[index] = value } }

        var values: [ComparisonFailure?] { lock.withLock { slots } }
    }

    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
