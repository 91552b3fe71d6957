import Foundation
import LensKit
import Strobe
import StrobePerf
import StrobeProcessRunner
import StrobeResults
import Testing

extension PerfRunnerTests {
    /// The demo's story at small scale: perf tests of the lens pipeline on
    /// both kernels, each writing a results file that holds every iteration
    /// (the tools package's tests diff such files).
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
                let suite = PerfSuite(
                    "LensPipeline",
                    tests: [
                        PerfTest("apply lens", metrics: [.interval("lens apply"), .interval("frame")]) { _ in
                            let pipeline = LensPipeline(configuration: configuration)
                            _ = pipeline.run(frames: 2)
                            pipeline.shutDown()
                        }
                    ])
                let options = try PerfSuiteOptions.parse([
                    "--iterations", "5", "--warmup", "1", "--results-dir", "\(directory)/\(kernel.rawValue)", "--tag",
                    "kernel=\(kernel.rawValue)",
                ])
                let run = try await suite.run(options: options)
                #expect(!run.hasFailures)
                #expect(run.tests[0].metric("interval:lens apply:sum")?.samples.count == 5)
            }
            for kernel in Lens.Kernel.allCases {
                let kernelDirectory = "\(directory)/\(kernel.rawValue)"
                let files = try FileManager.default.contentsOfDirectory(atPath: kernelDirectory)
                    .filter { $0.hasSuffix(".\(ResultsFile.fileExtension)") }
                #expect(files.count == 1, "\(files)")
                let stored = try ResultsFile.read("\(kernelDirectory)/\(try #require(files.first))")
                #expect(stored.tests.first?.metric("interval:lens apply:sum")?.samples.count == 5)
            }
        }
    }
}
