import Foundation
import Strobe

/// A camera pipeline: the main loop captures a frame, hands bands of rows to
/// worker threads that apply a lens, waits for them and presents the result,
/// against a frame deadline. Every step is traced with Strobe.
///
/// The trace shows nested intervals on the main thread (`frame` > `capture`,
/// `dispatch`, `wait for workers`, `present`), `lens apply` on the workers
/// with rusage and a flow from the frame that caused it, and counters for the
/// queue depth and image memory.
public final class LensPipeline: @unchecked Sendable {
    /// What the pipeline does.
    public struct Configuration: Sendable {
        /// Frame width in pixels.
        public var width = 640
        /// Frame height in pixels.
        public var height = 480
        /// Worker threads applying the lens.
        public var workers = 2
        /// Bands of rows each frame is split into.
        public var bands = 8
        /// The colour-grade kernel.
        public var kernel: Lens.Kernel = .vectorized
        /// The frame deadline, in seconds.
        public var frameBudget = 1.0 / 60
        /// A frame that waits 45 ms for a shader compile, making it late;
        /// nil for none.
        public var stallingFrame: Int?
        /// Whether the workers take one lock around each band, so that they
        /// apply the lens one after the other: the same work on the same
        /// threads, no longer in parallel (a lock taken too wide).
        public var serialWorkers = false

        /// The default pipeline.
        public init() {}
    }

    /// What a run of frames did.
    public struct Report: Sendable {
        /// Frames processed.
        public var frames = 0
        /// Frames that took longer than the budget.
        public var missedDeadlines = 0
        /// Wall time of every frame, in seconds.
        public var frameTimes: [Double] = []
    }

    private struct Job {
        var image: Image
        var rows: Range<Int>
        var output: UnsafeMutableBufferPointer<Float>
        var flow: Trace.Flow
        var done: DispatchGroup
    }

    /// The configuration the pipeline runs with.
    public let configuration: Configuration
    private let lens: Lens
    private let condition = NSCondition()
    /// Held around each band with ``Configuration/serialWorkers``.
    private let bandLock = NSLock()
    private var queue: [Job] = []
    private var stopping = false
    private var threads: [Thread] = []
    private var output: UnsafeMutableBufferPointer<Float>
    /// The frame being processed: captured into the same storage every
    /// frame, as from a camera's buffer pool, so that no frame allocates
    /// (and page-faults in) a fresh image.
    private var frame: Image

    /// Starts the worker threads and returns once each has started (named
    /// itself and gone to wait for work), so that no thread's start-up falls
    /// into the frames that follow: a perf test's counts would depend on
    /// when the scheduler ran it.
    public init(configuration: Configuration) {
        self.configuration = configuration
        lens = Lens(kernel: configuration.kernel)
        output = .allocate(capacity: configuration.width * configuration.height * 4)
        output.initialize(repeating: 0)
        frame = Image(width: configuration.width, height: configuration.height)
        let started = DispatchSemaphore(value: 0)
        for index in 0..<configuration.workers {
            let thread = Thread { [unowned self] in self.work(index, started: started) }
            thread.name = "lens worker \(index)"
            threads.append(thread)
            thread.start()
        }
        for _ in 0..<configuration.workers { started.wait() }
    }

    deinit {
        output.deallocate()
    }

    /// Stops the worker threads.
    public func shutDown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        while threads.contains(where: { !$0.isFinished }) { usleep(500) }
    }

    /// Runs `frames` frames back to back.
    public func run(frames: Int) -> Report {
        var report = Report()
        for index in 0..<frames {
            let seconds = processFrame(index)
            report.frames += 1
            report.frameTimes.append(seconds)
            if seconds > configuration.frameBudget { report.missedDeadlines += 1 }
        }
        return report
    }

    /// Captures, filters and presents one frame; returns its wall time in seconds.
    @discardableResult
    public func processFrame(_ index: Int) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        Trace.interval("frame") {
            // The workers let go of the previous frame before finishing
            // their bands, so the storage is not shared here and is
            // written in place.
            Trace.interval("capture") { frame.capture(frame: index) }
            let image = frame
            Trace.counter("memory.frame_bytes", image.byteCount, unit: .bytes)
            if index == configuration.stallingFrame {
                Trace.interval("compile shaders") { usleep(45_000) }
            }
            let done = DispatchGroup()
            Trace.interval("dispatch") {
                let flow = Trace.Flow()
                Trace.instant("hand off", arguments: ["frame": .int(Int64(index))])
                Trace.begin("enqueue bands", flow: flow)
                condition.lock()
                let bandHeight = (configuration.height + configuration.bands - 1) / configuration.bands
                for band in 0..<configuration.bands {
                    let rows = (band * bandHeight)..<min((band + 1) * bandHeight, configuration.height)
                    done.enter()
                    queue.append(Job(image: image, rows: rows, output: output, flow: flow, done: done))
                }
                Trace.counter("queue depth", queue.count)
                condition.broadcast()
                condition.unlock()
                Trace.end()
            }
            Trace.interval("wait for workers") { done.wait() }
            Trace.interval("present") {
                var checksum: Float = 0
                for index in stride(from: 0, to: output.count, by: 97) { checksum += output[index] }
                Trace.counter("frame checksum", Double(checksum))
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if seconds > configuration.frameBudget {
            // No argument list: one allocated only for a late frame would
            // make a perf test's allocation count follow the clock.
            Trace.instant("deadline missed")
            Trace.counter("late frame ms", seconds * 1000)
        }
        return seconds
    }

    private func work(_ index: Int, started: DispatchSemaphore) {
        Trace.setThreadName("lens worker \(index)")
        started.signal()
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                condition.unlock()
                return
            }
            var job: Job? = queue.removeFirst()
            Trace.counter("queue depth", queue.count)
            condition.unlock()
            if configuration.serialWorkers { bandLock.lock() }
            Trace.interval("lens apply", capturing: .resourceUsage) {
                let band = job!
                Trace.begin("band", terminatingFlow: band.flow, arguments: ["rows": .int(Int64(band.rows.count))])
                lens.apply(to: band.image, rows: band.rows, into: band.output)
                Trace.end()
            }
            if configuration.serialWorkers { bandLock.unlock() }
            // Let go of the frame before the band is done: the main thread
            // then writes the next frame into the same storage, uncopied.
            let done = job!.done
            job = nil
            done.leave()
        }
    }
}
