import StrobeProcessRunner
import StrobeResults
import Synchronization

/// A performance test: setup blocks that bring the code one step away from
/// the workflow (not measured), a measure block that runs the workflow
/// (traced and measured), and an optional teardown.
///
/// A test has up to two setups, and says plainly when each runs:
///
/// - `setupOnce` runs **once per process**, before the test's first
///   iteration (warm-ups included), outside every iteration's trace session
///   and timing. Its value (a pipeline, a decoded input, a database) is
///   handed to `setup`, `measure` and `teardown`, typed, with no global to
///   hold it. Copies of the test share it: running the test again in the
///   same process reuses the value, and a failure is reported again without
///   running `setupOnce` a second time.
/// - `setup` runs **before every iteration**, warm-ups included, also
///   outside the trace session and timing; `teardown` runs after every
///   iteration, once its session has stopped.
///
/// ```swift
/// PerfTest(
///     "apply lens", metrics: [.interval("lens apply", .sum)],
///     setupOnce: { LensPipeline(configuration: LensPipeline.Configuration()) },
///     measure: { pipeline, context in
///         let report = pipeline.run(frames: 8)
///         context.report("frames over budget", Double(report.missedDeadlines))
///     }
/// )
/// ```
///
/// Every iteration records its own trace. Each test always reports the wall
/// time of the measure block (`wall`); the CPU time of every thread of the
/// process during the block except Strobe's own background writer
/// (`process.cpu.user`, `process.cpu.system`); the process's context switches
/// and page faults (`process.context_switches.voluntary`,
/// `process.context_switches.involuntary`, `process.faults.minor`,
/// `process.faults.major`); for a synchronous block the same figures of the
/// measuring thread alone (`thread.cpu.user`, `thread.cpu.system`,
/// `thread.context_switches.…`, `thread.faults.…`); the trace metrics it asks
/// for; and any value the block reports through its ``PerfContext``.
public struct PerfTest: Sendable {
    enum Body: Sendable {
        case sync(@Sendable (PerfContext) throws -> Void)
        case async(@Sendable (PerfContext) async throws -> Void)
    }

    /// The blocks of an iteration, with the value of `setupOnce` bound in.
    struct Blocks: Sendable {
        var setup: (@Sendable () async throws -> Void)? = nil
        var body: Body
        var teardown: (@Sendable () async throws -> Void)? = nil
    }

    /// The test's name.
    public var name: String
    /// Metrics taken from each iteration's trace.
    public var metrics: [TraceMetric]
    /// When to stop iterating; nil takes the suite's rule.
    public var stopRule: StopRule?
    /// Interval names that capture rusage in the iteration's trace session.
    public var resourceUsageIntervals: Set<String>
    /// Runs `setupOnce` the first time in the process (later calls wait for
    /// or reuse its value) and gives the iteration blocks; the runner calls
    /// it once per run, before the first iteration.
    let prepare: @Sendable () async throws -> Blocks

    /// A test whose measure block is synchronous. It reports the process's
    /// CPU time and rusage deltas (`process.*`) and the measuring thread's
    /// own (`thread.*`, from `RUSAGE_THREAD`, where the system has it).
    ///
    /// - Parameters:
    ///   - setup: Runs before every iteration, warm-ups included; not
    ///     traced or measured.
    ///   - measure: The workflow, traced and measured.
    ///   - teardown: Runs after every iteration; not traced or measured.
    public init(
        _ name: String,
        metrics: [TraceMetric] = [],
        stopRule: StopRule? = nil,
        resourceUsageIntervals: Set<String> = [],
        setup: (@Sendable () async throws -> Void)? = nil,
        measure: @escaping @Sendable (PerfContext) throws -> Void,
        teardown: (@Sendable () async throws -> Void)? = nil
    ) {
        let blocks = Blocks(setup: setup, body: .sync(measure), teardown: teardown)
        self.init(name, metrics, stopRule, resourceUsageIntervals) { blocks }
    }

    /// A test whose measure block is asynchronous. It may hop threads, so it
    /// reports the process's CPU time and rusage deltas (`process.*`) only.
    ///
    /// - Parameters:
    ///   - setup: Runs before every iteration, warm-ups included; not
    ///     traced or measured.
    ///   - measureAsync: The workflow, traced and measured.
    ///   - teardown: Runs after every iteration; not traced or measured.
    public init(
        _ name: String,
        metrics: [TraceMetric] = [],
        stopRule: StopRule? = nil,
        resourceUsageIntervals: Set<String> = [],
        setup: (@Sendable () async throws -> Void)? = nil,
        measureAsync: @escaping @Sendable (PerfContext) async throws -> Void,
        teardown: (@Sendable () async throws -> Void)? = nil
    ) {
        let blocks = Blocks(setup: setup, body: .async(measureAsync), teardown: teardown)
        self.init(name, metrics, stopRule, resourceUsageIntervals) { blocks }
    }

    /// A test with a synchronous measure block and a setup that runs once
    /// per process, whose value the other blocks receive.
    ///
    /// - Parameters:
    ///   - setupOnce: Runs once per process, before the test's first
    ///     iteration, outside every trace session and timing. Its value goes
    ///     to `setup`, `measure` and `teardown`.
    ///   - setup: Runs before every iteration, warm-ups included, with the
    ///     value of `setupOnce`; not traced or measured.
    ///   - measure: The workflow, traced and measured, with the value of
    ///     `setupOnce`.
    ///   - teardown: Runs after every iteration with the value of
    ///     `setupOnce`; not traced or measured.
    public init<Fixture: Sendable>(
        _ name: String,
        metrics: [TraceMetric] = [],
        stopRule: StopRule? = nil,
        resourceUsageIntervals: Set<String> = [],
        setupOnce: @escaping @Sendable () async throws -> Fixture,
        setup: (@Sendable (Fixture) async throws -> Void)? = nil,
        measure: @escaping @Sendable (Fixture, PerfContext) throws -> Void,
        teardown: (@Sendable (Fixture) async throws -> Void)? = nil
    ) {
        let prepare = Self.preparing(setupOnce: setupOnce, setup: setup, teardown: teardown) { fixture in
            .sync { context in try measure(fixture, context) }
        }
        self.init(name, metrics, stopRule, resourceUsageIntervals, prepare: prepare)
    }

    /// A test with an asynchronous measure block and a setup that runs once
    /// per process, whose value the other blocks receive. Like
    /// ``init(_:metrics:stopRule:resourceUsageIntervals:setup:measureAsync:teardown:)``
    /// it reports the process's figures (`process.*`) only.
    ///
    /// - Parameters:
    ///   - setupOnce: Runs once per process, before the test's first
    ///     iteration, outside every trace session and timing. Its value goes
    ///     to `setup`, `measureAsync` and `teardown`.
    ///   - setup: Runs before every iteration, warm-ups included, with the
    ///     value of `setupOnce`; not traced or measured.
    ///   - measureAsync: The workflow, traced and measured, with the value
    ///     of `setupOnce`.
    ///   - teardown: Runs after every iteration with the value of
    ///     `setupOnce`; not traced or measured.
    public init<Fixture: Sendable>(
        _ name: String,
        metrics: [TraceMetric] = [],
        stopRule: StopRule? = nil,
        resourceUsageIntervals: Set<String> = [],
        setupOnce: @escaping @Sendable () async throws -> Fixture,
        setup: (@Sendable (Fixture) async throws -> Void)? = nil,
        measureAsync: @escaping @Sendable (Fixture, PerfContext) async throws -> Void,
        teardown: (@Sendable (Fixture) async throws -> Void)? = nil
    ) {
        let prepare = Self.preparing(setupOnce: setupOnce, setup: setup, teardown: teardown) { fixture in
            .async { context in try await measureAsync(fixture, context) }
        }
        self.init(name, metrics, stopRule, resourceUsageIntervals, prepare: prepare)
    }

    /// What a test whose setup runs once per process does before its first
    /// iteration: runs `setupOnce` (or waits for or reuses its value), then
    /// binds the value into `setup`, the measure block `body` makes of it,
    /// and `teardown`.
    private static func preparing<Fixture: Sendable>(
        setupOnce: @escaping @Sendable () async throws -> Fixture,
        setup: (@Sendable (Fixture) async throws -> Void)?,
        teardown: (@Sendable (Fixture) async throws -> Void)?,
        body: @escaping @Sendable (Fixture) -> Body
    ) -> @Sendable () async throws -> Blocks {
        let once = SetupOnce(setupOnce)
        return {
            let fixture = try await once.value()
            var blocks = Blocks(body: body(fixture))
            if let setup { blocks.setup = { try await setup(fixture) } }
            if let teardown { blocks.teardown = { try await teardown(fixture) } }
            return blocks
        }
    }

    private init(
        _ name: String, _ metrics: [TraceMetric], _ stopRule: StopRule?, _ resourceUsageIntervals: Set<String>,
        prepare: @escaping @Sendable () async throws -> Blocks
    ) {
        self.name = name
        self.metrics = metrics
        self.stopRule = stopRule
        self.resourceUsageIntervals = resourceUsageIntervals
        self.prepare = prepare
    }
}

/// Handed to a measure block: report values of your own.
public final class PerfContext: Sendable {
    /// The iteration, counting warm-up iterations from 0.
    public let iteration: Int
    private let reported = Mutex<[PerfMetric]>([])

    init(iteration: Int) {
        self.iteration = iteration
    }

    /// Records a value for this iteration, e.g. items processed; `better`
    /// tells `strobe diff` which way it improves.
    public func report(_ name: String, _ value: Double, unit: String = "count", better: MetricDirection = .lower) {
        reported.withLock { metrics in
            if let index = metrics.firstIndex(where: { $0.name == name }) {
                metrics[index].samples = [value]
            } else {
                metrics.append(PerfMetric(name: name, unit: unit, better: better, samples: [value]))
            }
        }
    }

    var values: [PerfMetric] { reported.withLock { $0 } }
}
