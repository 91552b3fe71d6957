import Foundation
import StrobeDiff
import StrobeProcessRunner
import StrobeResults
import StrobeStatistics

/// The processes of a `strobe compare`: a results directory per side, and
/// rounds of one baseline and one candidate process in random order.
struct InterleavedExperiment {
    /// A side of the comparison.
    enum Side: String, CaseIterable {
        case baseline, candidate
    }

    /// What a command is.
    enum Mode {
        /// A perf-suite executable that takes `--output`, `--iterations` and `--round`.
        case suite
        /// Any program, measured per launch under the test name given.
        case perLaunch(name: String)
    }

    let root: String
    let commands: [Side: String]
    let mode: Mode
    let iterations: Int
    let warmup: Int?
    let timeout: Double
    private var generator: SeededGenerator

    init(
        directory: String, commands: [Side: String], mode: Mode, iterations: Int, warmup: Int?, timeout: Double,
        seed: UInt64?
    ) throws(CommandFailure) {
        root = directory
        self.commands = commands
        self.mode = mode
        self.iterations = iterations
        self.warmup = warmup
        self.timeout = timeout
        generator = SeededGenerator(seed: seed ?? UInt64.random(in: 0...UInt64.max))
        let files = FileManager.default
        for side in Side.allCases {
            let path = "\(directory)/\(side.rawValue)"
            if let existing = try? files.contentsOfDirectory(atPath: path), !existing.isEmpty {
                throw CommandFailure(
                    message:
                        "--results-dir \(directory): \(path) already holds results; remove it or choose another directory",
                    status: 2)
            }
        }
        do {
            for side in Side.allCases {
                try files.createDirectory(atPath: "\(directory)/\(side.rawValue)", withIntermediateDirectories: true)
            }
            try files.createDirectory(atPath: "\(directory)/logs", withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(
                message: "--results-dir \(directory): cannot create it: \(error.localizedDescription)", status: 2)
        }
    }

    /// In a suite, the tests a round runs (`--filter`); nil for all.
    var onlyTests: [String]?

    /// Whether suite processes sample their measure blocks (`--profile`).
    var profile = false

    func directory(of side: Side) -> String { "\(root)/\(side.rawValue)" }

    var logDirectory: String { "\(root)/logs" }

    /// Runs round `round`: both sides once, in random order.
    mutating func runRound(_ round: Int) throws(CommandFailure) {
        var order = Side.allCases
        if Bool.random(using: &generator) { order.reverse() }
        if round == 1, case .perLaunch = mode {
            for side in order { try warmUpLaunches(side) }
        }
        for side in order { try run(side, round: round) }
    }

    private func run(_ side: Side, round: Int) throws(CommandFailure) {
        guard let command = commands[side] else { return }
        switch mode {
        case .suite:
            var line =
                "\(command) --output \(Self.shellQuoted(directory(of: side))) --iterations \(iterations) --round \(round)"
            if let warmup { line += " --warmup \(warmup)" }
            if profile { line += " --profile" }
            if let onlyTests, !onlyTests.isEmpty {
                line += " --filter " + Self.shellQuoted(Self.exactNames(onlyTests))
            }
            let log = "\(logDirectory)/round-\(round)-\(side.rawValue).log"
            let status = try Self.runShell(line, log: log, timeout: timeout)
            guard status == 0 else {
                throw CommandFailure(
                    message: "the \(side.rawValue) (round \(round)) exited with status \(status): \(command)\n"
                        + Self.tail(of: log),
                    status: 2)
            }
        case .perLaunch(let name):
            var options = ProcessRunner.Options()
            options.iterations = 1
            options.warmupIterations = 0
            options.timeout = timeout
            options.name = name
            options.requiresTrace = false
            let log = "\(logDirectory)/round-\(round)-\(side.rawValue).log"
            let result = ProcessRunner(options: options).run(["/bin/sh", "-c", Self.redirected(command, to: log)])
            if let error = result.error {
                throw CommandFailure(
                    message: "the \(side.rawValue) (round \(round)) failed: \(error): \(command)\n"
                        + Self.tail(of: log), status: 2)
            }
            let metadata = RunMetadata.current(
                suite: name, buildConfiguration: "", tags: ["side": side.rawValue], round: round)
            let path = "\(directory(of: side))/\(fileSafe(name))-round-\(round).\(ResultsFile.fileExtension)"
            do throws(ResultsFileError) {
                try ResultsFile.write(PerfRun(metadata: metadata, tests: [result]), to: path)
            } catch {
                throw CommandFailure(message: error.description, status: 2)
            }
        }
    }

    private func warmUpLaunches(_ side: Side) throws(CommandFailure) {
        guard let command = commands[side], (warmup ?? 1) > 0 else { return }
        var options = ProcessRunner.Options()
        options.iterations = 0
        options.warmupIterations = warmup ?? 1
        options.timeout = timeout
        options.requiresTrace = false
        let log = "\(logDirectory)/warm-up-\(side.rawValue).log"
        let result = ProcessRunner(options: options).run(["/bin/sh", "-c", Self.redirected(command, to: log)])
        if let error = result.error {
            throw CommandFailure(
                message: "the \(side.rawValue)'s warm-up failed: \(error): \(command)\n" + Self.tail(of: log), status: 2
            )
        }
    }

    /// Runs `line` through /bin/sh with its output in `log`; stops it after
    /// `timeout` seconds (SIGTERM, then SIGKILL).
    static func runShell(_ line: String, log: String, timeout: Double) throws(CommandFailure) -> Int32 {
        guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log)
        else {
            throw CommandFailure(message: "cannot write the log \(log)", status: 2)
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
            throw CommandFailure(message: "cannot start /bin/sh -c \(line): \(error.localizedDescription)", status: 2)
        }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            if finished.wait(timeout: .now() + 2) == .timedOut { kill(process.processIdentifier, SIGKILL) }
            finished.wait()
            throw CommandFailure(
                message: "stopped after the \(Int(timeout)) s timeout: \(line)\n" + tail(of: log), status: 2)
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

    /// `name` with anything but letters, digits, `-`, `_` and `.` replaced by `-`.
    private func fileSafe(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "-" })
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

    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
