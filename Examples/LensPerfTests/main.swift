// Perf tests of the lens pipeline. The lens's kernel comes from the
// LENS_KERNEL environment variable (vectorized, the default; scalar; or
// rebuilt-curve, the demo's regression), so the same suite measures each
// build. LENS_EXTRA_ALLOCATION=1 makes "capture frame" allocate and free one
// more block per iteration: a change no clock can see that its exact
// allocation count shows. LENS_APPLY_FRAMES sets the frames one "apply
// lens" iteration filters: 2 by default, natively and in the simulated
// process that counts instructions under Valgrind (where everything is
// 10-60 times slower), so that both count the same work.
//
//   swift run -c release LensPerfTests --iterations 20 --tag kernel=vectorized

import Foundation
import LensKit
import Strobe
import StrobePerf
import Synchronization

/// The pipeline configuration, with the kernel LENS_KERNEL names.
func configurationFromEnvironment() -> LensPipeline.Configuration {
    var configuration = LensPipeline.Configuration()
    configuration.kernel =
        ProcessInfo.processInfo.environment["LENS_KERNEL"].flatMap(Lens.Kernel.init(rawValue:)) ?? .vectorized
    return configuration
}

/// What "apply lens" builds once per process: the configuration, and a slot
/// for the pipeline of the iteration under way, which `setup` starts and
/// `teardown` shuts down, so every iteration measures a freshly started
/// pipeline.
final class PipelineSlot: Sendable {
    let configuration: LensPipeline.Configuration
    private let pipeline = Mutex<LensPipeline?>(nil)

    init(configuration: LensPipeline.Configuration) {
        self.configuration = configuration
    }

    /// Starts a pipeline: its threads are running, nothing is filtered yet.
    func start() {
        let started = LensPipeline(configuration: configuration)
        pipeline.withLock { $0 = started }
    }

    /// The running pipeline, if `start()` made one.
    var current: LensPipeline? { pipeline.withLock { $0 } }

    /// Shuts the running pipeline down and empties the slot.
    func shutDown() {
        let running = pipeline.withLock { slot in
            defer { slot = nil }
            return slot
        }
        running?.shutDown()
    }
}

/// Frames per "apply lens" iteration (LENS_APPLY_FRAMES; by default 2,
/// natively and under simulation alike: a native and a simulated count of
/// one build agree only over the same frames).
let applyFrames =
    ProcessInfo.processInfo.environment["LENS_APPLY_FRAMES"].flatMap(Int.init).map { max($0, 1) } ?? 2

let applyLens = PerfTest(
    "apply lens",
    metrics: [
        .interval("lens apply", .sum), .interval("lens apply", .max), .interval("frame", .sum),
        .interval("lens apply", .cpu), .counter("queue depth", .max),
    ],
    resourceUsageIntervals: ["lens apply"],
    setupOnce: { PipelineSlot(configuration: configurationFromEnvironment()) },
    setup: { slot in slot.start() },
    measure: { slot, context in
        guard let pipeline = slot.current else { return }
        let report = pipeline.run(frames: applyFrames)
        context.report("frames over budget", Double(report.missedDeadlines))
    },
    teardown: { slot in slot.shutDown() }
)

/// The frame buffer "capture frame" captures into, made once per process,
/// as the pipeline keeps one: no iteration allocates or faults in a frame.
final class FrameBuffer: Sendable {
    let image: Mutex<Image>

    init(configuration: LensPipeline.Configuration) {
        image = Mutex(Image(width: configuration.width, height: configuration.height))
    }
}

/// Whether "capture frame" allocates one block more per iteration
/// (LENS_EXTRA_ALLOCATION=1).
let extraAllocation = ProcessInfo.processInfo.environment["LENS_EXTRA_ALLOCATION"] == "1"

let captureFrame = PerfTest(
    "capture frame", metrics: [.interval("capture", .sum)],
    setupOnce: { FrameBuffer(configuration: configurationFromEnvironment()) }
) { buffer, _ in
    buffer.image.withLock { image in
        for frame in 0..<20 {
            Trace.interval("capture") { image.capture(frame: frame) }
        }
    }
    if extraAllocation {
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        scratch.storeBytes(of: 1, as: Int.self)
        scratch.deallocate()
    }
}

await PerfSuite("LensPipeline", tests: [captureFrame, applyLens]).main()
