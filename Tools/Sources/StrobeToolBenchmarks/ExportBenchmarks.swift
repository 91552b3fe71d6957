import Foundation
import Strobe
import StrobeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `make bench export`: `strobe export --format otlp` of a trace of about
/// 100 MB, its speed (MB of trace per second) and peak resident memory,
/// against `strobe summarize` of the same trace (which reads it the same
/// way) and against copying its bytes, measured in the same run; and the
/// same at a quarter of the size, so the memory's growth with the trace
/// shows.
///
/// The trace: four threads, each nesting `frame` ⊃ `layout` ⊃ `draw` with
/// an integer argument on `frame`, recorded here with the SDK until the
/// file passes the size. The command is the `strobe` built beside this
/// benchmark, run as a user runs it, its peak resident memory from
/// `wait4`'s rusage.
enum ExportBenchmarks {
    static let sizes = [25 << 20, 100 << 20]

    static func run() {
        do {
            try measure()
        } catch {
            FileHandle.standardError.write(Data("StrobeToolBenchmarks export: \(error)\n".utf8))
            exit(1)
        }
    }

    static func measure() throws {
        let strobe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("strobe").path
        guard FileManager.default.isExecutableFile(atPath: strobe) else {
            throw BenchmarkFailure(
                "\(strobe): no strobe command beside the benchmark; build it first (swift build -c release --product strobe)"
            )
        }
        print(
            "{\"section\":\"export\",\"cpu\":\"\(HistoryBenchmarks.cpuModel())\","
                + "\"cores\":\(ProcessInfo.processInfo.activeProcessorCount),"
                + "\"load_average\":\"\(TrendBenchmarks.loadAverage())\"}")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-export-bench-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        for size in sizes {
            let trace = scratch + "/trace-\(size >> 20).pftrace"
            let intervals = try record(trace, atLeast: size)
            let bytes = Double(try FileManager.default.attributesOfItem(atPath: trace)[.size] as? Int ?? 0)
            let megabytes = bytes / 1e6
            // The baselines: copying the bytes, and reading the trace.
            let copy = try Measured.run(["/bin/cp", trace, scratch + "/copy.pftrace"])
            try? FileManager.default.removeItem(atPath: scratch + "/copy.pftrace")
            let summarize = try Measured.run([strobe, "summarize", trace])
            let output = scratch + "/trace.otlp"
            let export = try Measured.run([strobe, "export", trace, "--format", "otlp", "-o", output])
            let exported = Double(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int ?? 0)
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: trace)
            print("{\"section\":\"export\",\"load_average\":\"\(TrendBenchmarks.loadAverage())\"}")
            Figure(
                name: "strobe export --format otlp of a \(Int(megabytes.rounded())) MB trace (\(intervals) intervals)",
                value: megabytes / export.seconds, unit: "MB/s",
                baselineName: "strobe summarize of the same trace", baselineValue: megabytes / summarize.seconds,
                target: size == sizes.last ? "value >= 50" : nil,
                extra: [
                    "export_s": export.seconds, "summarize_s": summarize.seconds, "copy_s": copy.seconds,
                    "copy_mb_per_s": megabytes / copy.seconds, "trace_mb": megabytes,
                    "otlp_mb": exported / 1e6, "export_peak_rss_mb": export.peakResidentMB,
                    "summarize_peak_rss_mb": summarize.peakResidentMB,
                ]
            ).printLine()
            Figure(
                name: "strobe export --format otlp of a \(Int(megabytes.rounded())) MB trace, peak resident memory",
                value: export.peakResidentMB, unit: "MB",
                baselineName: "strobe summarize of the same trace", baselineValue: summarize.peakResidentMB,
                extra: ["trace_mb": megabytes, "export_rss_per_trace_mb": export.peakResidentMB / megabytes]
            ).printLine()
        }
    }

    /// Records into `path` until the file holds at least `size` bytes;
    /// returns how many intervals were recorded.
    static func record(_ path: String, atLeast size: Int) throws -> Int {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        let threads = 4
        let rounds = 20_000
        let total = Counter()
        while (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 < size {
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                for round in 0..<rounds {
                    Trace.begin("frame", arguments: ["round": .int(Int64(round))])
                    Trace.interval("layout") {
                        Trace.interval("draw") {}
                    }
                    Trace.end()
                }
                total.add(3 * rounds)
            }
            // Let the writer drain the rings, so none discards.
            usleep(20_000)
        }
        try session.stop()
        return total.value
    }

    /// A count shared by the recording threads.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        func add(_ amount: Int) {
            lock.lock()
            count += amount
            lock.unlock()
        }

        var value: Int {
            lock.lock()
            defer { lock.unlock() }
            return count
        }
    }
}

/// A command's wall time and peak resident memory, from `wait4`.
struct Measured {
    var seconds: Double
    var peakResidentMB: Double

    /// Runs `arguments` (the program first, by path) with standard output
    /// discarded; throws when it fails.
    static func run(_ arguments: [String]) throws -> Measured {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw BenchmarkFailure("\(arguments[0]): cannot start: \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchmarkFailure("wait4: \(String(cString: strerror(errno)))") }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard status == 0 else {
            throw BenchmarkFailure("\(arguments.joined(separator: " ")) failed (wait status \(status))")
        }
        // ru_maxrss is in KiB on Linux.
        return Measured(seconds: seconds, peakResidentMB: Double(usage.ru_maxrss) * 1024 / 1e6)
    }
}
