import CStrobeProcess
import Foundation
import StrobeFormatting
import StrobeReader
import StrobeResults

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command once per iteration with `STROBE_TRACE_OUTPUT` set, waits
/// for it with `wait4`, and takes metrics from its rusage and its trace:
/// what `strobe run` does, for cold starts and for programs in any language
/// that write Strobe's format.
public struct ProcessRunner: Sendable {
    /// How the runner runs.
    public struct Options: Sendable {
        /// Measured iterations.
        public var iterations = 10
        /// Warm-up iterations, run and discarded.
        public var warmupIterations = 1
        /// Seconds a child may run before it is stopped (SIGTERM, then
        /// SIGKILL two seconds later).
        public var timeout: Double = 60
        /// Where kept traces go; nil keeps none.
        public var traceDirectory: String?
        /// The test's name.
        public var name = "process"
        /// Whether a launch that writes no trace is a failure. When false,
        /// such a launch is measured by its rusage alone.
        public var requiresTrace = true

        /// The defaults.
        public init() {}
    }

    /// How the runner runs.
    public var options: Options

    /// A runner with `options`.
    public init(options: Options) {
        self.options = options
    }

    /// Runs `command` (`arguments[0]` is looked up on PATH) and returns the
    /// samples; a failing iteration ends the run and is recorded in the result.
    public func run(_ command: [String]) -> PerfTestResult {
        var result = PerfTestResult(name: options.name, warmupIterations: options.warmupIterations)
        var metrics = MetricTable()
        let scratch = ScratchFiles.base + "/strobe-run-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for iteration in 0..<(options.warmupIterations + options.iterations) {
            let measured = iteration - options.warmupIterations
            let tracePath = "\(scratch)/iteration-\(iteration).pftrace"
            do {
                let sample = try runOnce(command, tracePath: tracePath)
                if measured >= 0 {
                    metrics.add(sample)
                    if let directory = options.traceDirectory {
                        let folder = "\(directory)/\(ResultsFile.fileSafe(options.name))"
                        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                        let destination =
                            folder + String(format: "/iter-%03d-%.2fms.pftrace", measured, sample.wall / 1e6)
                        try? FileManager.default.removeItem(atPath: destination)
                        if (try? FileManager.default.moveItem(atPath: tracePath, toPath: destination)) != nil {
                            result.tracePaths.append(destination)
                        }
                    }
                }
            } catch {
                result.error = PerfTestError.describing(error, iteration: iteration, warmup: measured < 0)
                break
            }
            try? FileManager.default.removeItem(atPath: tracePath)
        }
        result.metrics = metrics.metrics
        return result
    }

    private func runOnce(_ command: [String], tracePath: String) throws -> IterationSample {
        var environment = ProcessInfo.processInfo.environment
        environment[Self.traceOutputVariable] = tracePath
        let pid = try spawn(command, environment: environment)
        let start = Self.monotonicNanoseconds()
        var status: Int32 = 0
        var usage = rusage()
        let termSent = try waitForExit(pid, command: command[0], start: start, status: &status, usage: &usage)
        let wall = Double(Self.monotonicNanoseconds() - start)
        if termSent { throw PerfTestError.timedOut(seconds: options.timeout) }
        if status & 0x7F != 0 { throw PerfTestError.crashed(signal: status & 0x7F) }
        let exitStatus = (status >> 8) & 0xFF
        if exitStatus != 0 { throw PerfTestError.exited(status: exitStatus) }

        func nanoseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3 }
        // The child's whole rusage as wait4 reports it: every thread,
        // including the child's own trace writer, which the parent cannot
        // tell apart.
        var values = [
            PerfMetric(name: "wall", unit: "ns", samples: [wall]),
            PerfMetric(name: MetricKind.cpuUserName, unit: "ns", samples: [nanoseconds(usage.ru_utime)]),
            PerfMetric(name: MetricKind.cpuSystemName, unit: "ns", samples: [nanoseconds(usage.ru_stime)]),
            PerfMetric(name: "process.max_rss", unit: "bytes", samples: [Double(usage.ru_maxrss) * 1024]),
            PerfMetric(name: "process.context_switches.voluntary", unit: "count", samples: [Double(usage.ru_nvcsw)]),
            PerfMetric(name: "process.context_switches.involuntary", unit: "count", samples: [Double(usage.ru_nivcsw)]),
            PerfMetric(name: "process.faults.minor", unit: "count", samples: [Double(usage.ru_minflt)]),
            PerfMetric(name: "process.faults.major", unit: "count", samples: [Double(usage.ru_majflt)]),
        ]
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: tracePath),
            (attributes[.size] as? Int ?? 0) > 0
        else {
            if options.requiresTrace { throw PerfTestError.noTrace(path: tracePath) }
            return IterationSample(wall: wall, values: values)
        }
        let trace = try TraceReader.read(contentsOf: tracePath)
        values += Self.traceMetrics(trace)
        return IterationSample(wall: wall, values: values)
    }

    /// Waits for `pid` to exit and reaps it; past the timeout sends SIGTERM,
    /// then SIGKILL two seconds later. Returns whether SIGTERM was sent.
    ///
    /// On Linux it sleeps in `poll` on a pidfd, which wakes the moment the
    /// child exits, so the wall time carries no polling delay. Elsewhere
    /// it checks with `WNOHANG` every half millisecond.
    private func waitForExit(
        _ pid: pid_t, command: String, start: UInt64, status: inout Int32, usage: inout rusage
    ) throws -> Bool {
        var termSent = false
        let descriptor = cstrobe_process_exit_descriptor(pid)
        defer { if descriptor >= 0 { close(descriptor) } }
        while true {
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { return termSent }
            if waited < 0 && errno != EINTR {
                let code = errno
                throw PerfTestError.cannotStart(
                    command: command, errno: code, reason: "wait4 failed: \(ErrnoText.message(code))")
            }
            let elapsed = Double(Self.monotonicNanoseconds() - start) / 1e9
            let deadline: Double
            if termSent {
                if elapsed > options.timeout + 2 { kill(pid, SIGKILL) }
                deadline = options.timeout + 2
            } else if elapsed > options.timeout {
                kill(pid, SIGTERM)
                termSent = true
                deadline = options.timeout + 2
            } else {
                deadline = options.timeout
            }
            if descriptor >= 0 {
                // Wake at the exit, or at the next deadline (at least 1 ms on,
                // so a child past SIGKILL is checked without spinning).
                let milliseconds = Int32(clamping: Int64(max((deadline - elapsed) * 1000, 1).rounded(.up)))
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, milliseconds)
            } else {
                usleep(500)
            }
        }
    }

    /// Every interval name's per-iteration sum and count, and every counter's
    /// last value.
    static func traceMetrics(_ trace: ParsedTrace) -> [PerfMetric] {
        var values: [PerfMetric] = []
        for name in Set(trace.intervals.map(\.name)).sorted() {
            for aggregate in [TraceMetric.IntervalAggregate.sum, .count] {
                let metric = TraceMetric.interval(name, aggregate)
                if let value = metric.value(in: trace) {
                    values.append(PerfMetric(name: metric.name, unit: metric.unit(in: trace), samples: [value]))
                }
            }
        }
        for counter in trace.counters where !counter.name.hasPrefix("strobe.") {
            let metric = TraceMetric.counter(counter.name, .last)
            if let value = metric.value(in: trace) {
                values.append(PerfMetric(name: metric.name, unit: counter.unit ?? "count", samples: [value]))
            }
        }
        return values
    }

    private func spawn(_ command: [String], environment: [String: String]) throws -> pid_t {
        guard let program = command.first else {
            throw PerfTestError.cannotStart(command: "", errno: nil, reason: "no command given")
        }
        var pid: pid_t = 0
        let arguments = command.map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            variables.forEach { free($0) }
        }
        let result = posix_spawnp(&pid, program, nil, nil, arguments, variables)
        guard result == 0 else {
            throw PerfTestError.cannotStart(command: program, errno: result, reason: ErrnoText.message(result))
        }
        return pid
    }

    /// The variable that tells a child where to write its trace; the SDK
    /// reads the same name (`TraceSession.outputEnvironmentVariable`, which a
    /// test holds equal to this one). Spelled here so that the runner does
    /// not link the recording runtime.
    package static let traceOutputVariable = "STROBE_TRACE_OUTPUT"

    /// CLOCK_MONOTONIC in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The first executable file named `name` in the folders of the `PATH`
    /// that `environment` gives (`/usr/local/bin:/usr/bin:/bin` without
    /// one); nil when none holds it.
    public static func executable(
        named name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").filter { !$0.isEmpty }.map { "\($0)/\(name)" }
            .first { access($0, X_OK) == 0 }
    }
}
