import Foundation
import LensKit
import Strobe
import StrobeDiff
import Testing

@testable import StrobePerf

extension PerfRunnerTests {
    /// The demo's story at small scale: perf tests of the lens pipeline on
    /// both kernels, results files, and a diff of them.
    @Suite struct DemoPipelineTests {
        @Test func lensPerfTestsAndDiffRunEndToEnd() async throws {
            let directory = NSTemporaryDirectory() + "strobe-demo-\(getpid())"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            for kernel in Lens.Kernel.allCases {
                var settings = LensPipeline.Configuration()
                settings.kernel = kernel
                settings.width = 64
                settings.height = 48
                let configuration = settings
                let suite = PerfSuite("LensPipeline", tests: [
                    PerfTest("apply lens", metrics: [.interval("lens apply"), .interval("frame")]) { _ in
                        let pipeline = LensPipeline(configuration: configuration)
                        _ = pipeline.run(frames: 2)
                        pipeline.shutDown()
                    },
                ])
                let options = try PerfSuiteOptions.parse([
                    "--iterations", "5", "--warmup", "1", "--output", "\(directory)/\(kernel.rawValue)", "--tag", "kernel=\(kernel.rawValue)",
                ])
                let run = try await suite.run(options: options)
                #expect(!run.hasFailures)
                #expect(run.tests[0].metric("interval:lens apply:sum")?.samples.count == 5)
            }
            let baseline = try SampleSet.load(["\(directory)/vectorized"])
            let candidate = try SampleSet.load(["\(directory)/scalar"])
            let report = try DiffEngine.diff(baseline: baseline, candidate: candidate)
            let row = try #require(report.rows.first { $0.name == "apply lens/interval:lens apply:sum" })
            #expect(row.baseline.count == 5 && row.candidate.count == 5)
            #expect(row.shift != nil)
            #expect(report.exitStatus == (report.count(.regression) > 0 ? 1 : 0))
            #expect(report.renderMarkdown().contains("apply lens/interval:lens apply:sum"))
        }
    }
}
