import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `make bench export`: `strobe export` of a trace of about 100 MB and of
/// one about three times as large, in each streaming format (pprof, pprof
/// with `--interval`, otlp, otlp-json): MB of trace per second and peak
/// resident memory, against reading the same file through the packet
/// decoder alone (``TraceScan``, which keeps no event) and against copying
/// its bytes, measured in the same run. The two sizes show whether memory
/// grows with the trace.
///
/// The trace: four threads, each nesting `frame` ⊃ `layout` ⊃ `draw` with
/// an integer argument on `frame`, recorded here with the SDK, CPU samples
/// at 10 kHz, until the file passes the size. The command is the `strobe`
/// built beside this benchmark, run as a user runs it, its peak resident
/// memory from GNU time (see ``Measured``). The CPU model and the load
/// average are printed beside the figures.
enum ExportBenchmarks {
    static let sizes = [100 << 20, 300 << 20]

    /// The formats measured: the arguments after the trace, and a name.
    static let formats: [(name: String, arguments: [String])] = [
        ("pprof", ["--format", "pprof"]),
        ("pprof --interval frame", ["--format", "pprof", "--interval", "frame"]),
        ("otlp", ["--format", "otlp"]),
        ("otlp-json", ["--format", "otlp-json"]),
    ]

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
        let cpu = HistoryBenchmarks.cpuModel()
        ToolBenchmarkSection.printOpeningLine("export", loadAverage: true)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-export-bench-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        for size in sizes {
            let trace = scratch + "/trace-\(size >> 20).pftrace"
            let intervals = try record(trace, atLeast: size)
            defer { try? FileManager.default.removeItem(atPath: trace) }
            let megabytes = Double(try fileSize(trace)) / 1e6
            // The baselines: copying the bytes, and decoding every packet.
            let copy = try Measured.run(["/bin/cp", trace, scratch + "/copy.pftrace"])
            try? FileManager.default.removeItem(atPath: scratch + "/copy.pftrace")
            let scanStart = DispatchTime.now().uptimeNanoseconds
            let scan = try TraceScan.read(contentsOf: trace)
            let scanSeconds = Double(DispatchTime.now().uptimeNanoseconds - scanStart) / 1e9
            let decode = megabytes / scanSeconds
            let label = "a \(Int(megabytes.rounded())) MB trace (\(intervals) intervals, \(try samples(trace)) samples)"
            print(
                "{\"section\":\"export\",\"trace_mb\":\(megabytes),\"packets\":\(scan.packetCount),"
                    + "\"cpu\":\"\(cpu)\",\"load_average\":\"\(TrendBenchmarks.loadAverage())\"}")
            for format in formats {
                let output = scratch + "/export.out"
                let export = try Measured.run([strobe, "export", trace] + format.arguments + ["-o", output])
                let written = Double(try fileSize(output)) / 1e6
                try? FileManager.default.removeItem(atPath: output)
                let load = loadAverage1()
                Figure(
                    name: "strobe export --format \(format.name) of \(label)",
                    value: megabytes / export.seconds, unit: "MB/s",
                    baselineName: "the packet decoder alone (TraceScan) over the same file", baselineValue: decode,
                    target: format.name == "otlp" || format.name == "pprof" ? "value >= 50" : nil,
                    extra: [
                        "export_s": export.seconds, "decode_s": scanSeconds, "copy_mb_per_s": megabytes / copy.seconds,
                        "trace_mb": megabytes, "output_mb": written, "peak_rss_mb": export.peakResidentMB,
                        "load_1m": load,
                    ]
                ).printLine()
                Figure(
                    name: "strobe export --format \(format.name) of \(label), peak resident memory",
                    value: export.peakResidentMB, unit: "MB",
                    baselineName: "the trace's size", baselineValue: megabytes,
                    target: "value < 200",
                    extra: ["trace_mb": megabytes, "load_1m": load, "rss_is_the_command_alone": export.isExact ? 1 : 0]
                ).printLine()
            }
        }
    }

    static func fileSize(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    }

    /// The CPU samples of the trace at `path`, counted packet by packet.
    static func samples(_ path: String) throws -> Int {
        try PprofExport.encode(contentsOf: path).samples
    }

    /// The load average over the last minute.
    static func loadAverage1() -> Double {
        Double(TrendBenchmarks.loadAverage().split(separator: " ").first ?? "") ?? 0
    }

    /// Records into `path` until the file holds at least `size` bytes;
    /// returns how many intervals were recorded.
    static func record(_ path: String, atLeast size: Int) throws -> Int {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.cpuProfile = TraceConfiguration.CPUProfile(frequency: 10_000)
        let session = try TraceSession.start(configuration)
        let threads = 4
        let rounds = 5_000
        let total = Counter()
        while (try? fileSize(path)) ?? 0 < size {
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

/// A command's wall time and peak resident memory.
///
/// The memory comes from GNU time (`/usr/bin/time -f %M`), which forks the
/// command: `wait4`'s rusage of a child spawned from this process counts
/// this process's own peak as well (posix_spawn shares its memory until the
/// exec, and the kernel keeps the larger high-water mark). Without GNU time
/// it falls back to `wait4`, an upper bound, and says so.
struct Measured {
    var seconds: Double
    var peakResidentMB: Double
    /// Whether the peak is the command's alone (from GNU time).
    var isExact: Bool

    static let gnuTime = "/usr/bin/time"

    /// Runs `arguments` (the program first, by path) with standard output
    /// discarded; throws when it fails.
    static func run(_ arguments: [String]) throws -> Measured {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-time-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: report) }
        let timed = FileManager.default.isExecutableFile(atPath: gnuTime)
        let command = timed ? [gnuTime, "-f", "%M", "-o", report] + arguments : arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw BenchmarkFailure("\(command[0]): cannot start: \(String(cString: strerror(spawned)))")
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
        // Both in KiB on Linux.
        if timed, let text = try? String(contentsOfFile: report, encoding: .utf8),
            let kibibytes = Double(
                text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "")
        {
            return Measured(seconds: seconds, peakResidentMB: kibibytes * 1024 / 1e6, isExact: true)
        }
        return Measured(seconds: seconds, peakResidentMB: Double(usage.ru_maxrss) * 1024 / 1e6, isExact: false)
    }
}
