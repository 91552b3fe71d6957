import CStrobe
import Foundation
import Strobe
import StrobePerf
import StrobeTestSupport

/// The perf runner's own cost per iteration: an empty measure block run by
/// `PerfRunner`, beside one bare trace session started and stopped the same
/// way in the same run.
enum RunnerBenchmarks {
    static let iterations = 200
    static let runs = 5

    static func run() async {
        let bare = sessionStartStop(path: nil)
        // Where the runner writes its scratch traces on Linux.
        let folder = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
        let withFile = sessionStartStop(path: folder + "strobe-bench-\(getpid()).pftrace")
        let sync = await perIteration(PerfTest("empty sync") { _ in })
        let async = await perIteration(PerfTest("empty async", measureAsync: { _ in }))
        let traced = await perIteration(PerfTest("empty sync, one trace metric", metrics: [.interval("x")]) { _ in })
        let bareName = "TraceSession.start + stop alone, no file"
        figure("PerfRunner, empty sync test, per iteration", sync, bareName, bare)
        figure("PerfRunner, empty async test, per iteration", async, bareName, bare)
        figure(
            "PerfRunner, empty sync test with a trace metric, per iteration", traced,
            "TraceSession.start + stop alone, writing a file beside the runner's", withFile)
    }

    static func figure(_ name: String, _ samples: [Double], _ baselineName: String, _ baseline: [Double]) {
        Figure(
            name: name, value: samples[samples.count / 2], unit: "ms/iteration",
            baselineName: baselineName, baselineValue: baseline[baseline.count / 2], target: "value <= 0.3 ms",
            extra: [
                "min": samples.first!, "max": samples.last!, "baseline_min": baseline.first!,
                "baseline_max": baseline.last!, "iterations": Double(iterations), "runs": Double(runs),
            ]
        ).printLine()
    }

    /// Milliseconds per iteration of `test`, one figure per run, sorted.
    static func perIteration(_ test: PerfTest) async -> [Double] {
        var options = PerfRunner.Options()
        options.warmupIterations = 0
        options.stopRule = .iterations(iterations)
        let runner = PerfRunner(options: options)
        _ = await runner.run(test)
        var samples: [Double] = []
        for _ in 0..<runs {
            let start = cstrobe_monotonic_ns()
            let result = await runner.run(test)
            precondition(result.error == nil, "\(result.error!)")
            samples.append(Double(cstrobe_monotonic_ns() - start) / 1e6 / Double(iterations))
        }
        return samples.sorted()
    }

    /// Milliseconds per session started and stopped like the runner's (no
    /// process sampling), writing to `path` if given; one figure per run.
    static func sessionStartStop(path: String?) -> [Double] {
        defer { if let path { try? FileManager.default.removeItem(atPath: path) } }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        var samples: [Double] = []
        for _ in 0...runs {
            let start = cstrobe_monotonic_ns()
            for _ in 0..<iterations {
                let session = try! TraceSession.start(configuration)
                try! session.stop()
            }
            samples.append(Double(cstrobe_monotonic_ns() - start) / 1e6 / Double(iterations))
        }
        return Array(samples.dropFirst()).sorted()
    }
}
