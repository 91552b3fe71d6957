// Perf tests of the lens pipeline. The colour-grade kernel comes from the
// LENS_KERNEL environment variable (vectorized, the default, or scalar), so
// the same suite measures both builds.
//
//   swift run -c release LensPerfTests --iterations 20 --tag kernel=vectorized

import Foundation
import LensKit
import Strobe
import StrobePerf

/// Holds the pipeline between setup, measure and teardown.
final class PipelineHolder: @unchecked Sendable {
    var pipeline: LensPipeline?
}

let configuration: LensPipeline.Configuration = {
    var configuration = LensPipeline.Configuration()
    configuration.kernel = ProcessInfo.processInfo.environment["LENS_KERNEL"].flatMap(Lens.Kernel.init(rawValue:)) ?? .vectorized
    return configuration
}()
let holder = PipelineHolder()

let applyLens = PerfTest(
    "apply lens",
    metrics: [.interval("lens apply", .sum), .interval("lens apply", .max), .interval("frame", .sum),
              .interval("lens apply", .cpu), .counter("queue depth", .max)],
    resourceUsageIntervals: ["lens apply"],
    setup: {
        // One step away from the workflow: the pipeline is up, its threads
        // are running, nothing is filtered yet.
        holder.pipeline = LensPipeline(configuration: configuration)
    },
    measure: { context in
        guard let pipeline = holder.pipeline else { return }
        let report = pipeline.run(frames: 8)
        context.report("frames over budget", Double(report.missedDeadlines))
    },
    teardown: {
        holder.pipeline?.shutDown()
        holder.pipeline = nil
    }
)

let captureFrame = PerfTest("capture frame", metrics: [.interval("capture", .sum)]) { _ in
    for frame in 0..<20 {
        _ = Trace.interval("capture") { Image.cameraFrame(width: configuration.width, height: configuration.height, frame: frame) }
    }
}

await PerfSuite("LensPipeline", tests: [captureFrame, applyLens]).main()
