import Foundation
import PerfettoWire
import Strobe
import StrobeProcessRunner
import StrobeReader
import StrobeResults

/// Runs perf tests: warm-up iterations, then measured ones until the stop
/// rule is met, each iteration in its own trace session.
public struct PerfRunner: Sendable {
    /// How the runner runs.
    public struct Options: Sendable {
        /// Warm-up iterations per test, run and discarded.
        public var warmupIterations = 2
        /// The rule for tests that set none.
        public var stopRule: StopRule = .iterations(10)
        /// Where kept traces go; nil keeps none.
        public var traceDirectory: String?
        /// The suite's name, used in trace file names.
        public var suite = "suite"
        /// Count the measure block's heap allocations (`allocations`,
        /// `allocations.bytes`, `allocations.remaining`) where the process
        /// can: on by default.
        public var countAllocations = true
        /// Count the measure block's Swift retains and releases (`retains`,
        /// `releases`) where the runtime lets them be counted: on by default.
        public var countRetains = true
        /// Sample the measure blocks' call stacks and keep them in each
        /// test's ``PerfTestResult/profile``; nil takes `STROBE_CPU_PROFILE`
        /// from the environment, and no profile without it.
        public var cpuProfile: TraceConfiguration.CPUProfile?
        /// Where the measure blocks' instructions are counted (the
        /// `instructions` metric): by default the hardware counter where
        /// the machine has one. In a process that ``PerfSuite`` started
        /// under simulation (`--instructions simulated`) they are always
        /// counted, per function too, and the results keep counts only.
        public var instructions: InstructionCounting = .auto

        /// The defaults.
        public init() {}
    }

    /// How the runner runs.
    public var options: Options
    /// Called after every iteration: test, measured iteration (negative
    /// during warm-up), the planned count when known, and the wall time.
    public var progress: (@Sendable (String, Int, Int?, Double) -> Void)?

    /// A runner with `options`.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Runs `test` and returns every raw sample it produced.
    ///
    /// The test's `setupOnce` runs first, unless an earlier run in this
    /// process already ran it; then come the warm-up and measured
    /// iterations, each `setup`, measure block (in its own trace session,
    /// timed) and `teardown`. A failure in any block ends the test and is
    /// recorded in the result with what was measured before.
    public func run(_ test: PerfTest) async -> PerfTestResult {
        var result = PerfTestResult(name: test.name, warmupIterations: options.warmupIterations)
        let blocks: PerfTest.Blocks
        do {
            blocks = try await test.prepare()
        } catch {
            result.error = PerfTestError.blockFailed("setupOnce", error).description
            return result
        }
        let cpuProfile: TraceConfiguration.CPUProfile?
        do {
            cpuProfile = try options.cpuProfile ?? TraceConfiguration.CPUProfile.fromProcessEnvironment()
        } catch {
            result.error = "\(error)"
            return result
        }
        var profile = cpuProfile.map { profile in
            CallStackProfileBuilder(nanosecondsPerSample: 1e9 / Double(max(profile.frequency, 1)))
        }
        var metrics = MetricTable()
        if !countSelection.isEmpty { ExactCounts.leaveOutRuntimeCaches() }
        let instructionCounter = InstructionCounter.make(options.instructions).engine
        var instructionProfile: InstructionProfile?
        let rule = test.stopRule ?? options.stopRule
        // Only a trace someone reads is written to a file. Each iteration's
        // file is removed once read: on ext4, rewriting a truncated file
        // starts its writeback at close, which a fresh file does not.
        let keptFolder = options.traceDirectory.map { directory in
            "\(directory)/\(ResultsFile.fileSafe(options.suite))/\(ResultsFile.fileSafe(test.name))"
        }
        if let keptFolder {
            try? FileManager.default.createDirectory(atPath: keptFolder, withIntermediateDirectories: true)
        }
        var scratch: String?
        if !test.metrics.isEmpty || keptFolder != nil || cpuProfile != nil {
            let directory = ScratchFiles.base + "/strobe-perf-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            scratch = directory
        }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        let tracePath = scratch.map { $0 + "/iteration.pftrace" }
        var iteration = 0
        var measuredStart: UInt64?
        while true {
            let measured = iteration - options.warmupIterations
            if measured >= 0 {
                if measuredStart == nil { measuredStart = ProcessMeasurements.monotonicNanoseconds() }
                let elapsed = Double(ProcessMeasurements.monotonicNanoseconds() - (measuredStart ?? 0)) / 1e9
                if rule.isSatisfied(samples: metrics.samples(of: "wall"), elapsed: elapsed) { break }
            }
            do {
                let sample = try await runIteration(
                    test, blocks, iteration: iteration, tracePath: tracePath, cpuProfile: cpuProfile,
                    profile: &profile, instructions: instructionCounter, instructionProfile: &instructionProfile,
                    measured: measured >= 0)
                if measured >= 0 {
                    metrics.add(sample)
                    for (interval, path) in sample.criticalPaths {
                        if let index = result.criticalPaths.firstIndex(where: { $0.interval == interval }) {
                            result.criticalPaths[index].iterations.append(path)
                        } else {
                            result.criticalPaths.append(CriticalPathRecord(interval: interval, iterations: [path]))
                        }
                    }
                    if let keptFolder, let tracePath,
                        let kept = Self.keep(tracePath, iteration: measured, wall: sample.wall, in: keptFolder)
                    {
                        result.tracePaths.append(kept)
                    }
                }
                progress?(test.name, measured, Self.plannedCount(rule), sample.wall)
            } catch {
                result.error = PerfTestError.describing(error, iteration: iteration, warmup: measured < 0)
                break
            }
            if let tracePath { unlink(tracePath) }
            iteration += 1
        }
        result.metrics = metrics.metrics
        result.profile = profile?.profile
        if instructionCounter?.countsOnly == true {
            // Under simulation or emulation times and resource readings
            // mean nothing: the one rule `strobe diff` and the history
            // apply too, so a value the test reports (items processed) is
            // kept beside the counts.
            result.metrics.removeAll(where: \.isSimulatorReading)
            result.criticalPaths = []
            result.instructionProfile = instructionProfile
        }
        return result
    }

    static func plannedCount(_ rule: StopRule) -> Int? {
        if case .iterations(let count) = rule { return count }
        return nil
    }

    /// Runs one iteration; with no `tracePath` the session records as usual
    /// (its writer encodes every event) but writes no file.
    private func runIteration(
        _ test: PerfTest, _ blocks: PerfTest.Blocks, iteration: Int, tracePath: String?,
        cpuProfile: TraceConfiguration.CPUProfile?, profile: inout CallStackProfileBuilder?,
        instructions: (any InstructionEngine)?, instructionProfile: inout InstructionProfile?, measured: Bool
    ) async throws -> IterationSample {
        if let setup = blocks.setup {
            do { try await setup() } catch { throw PerfTestError.blockFailed("setup", error) }
        }
        var configuration = TraceConfiguration(outputPath: tracePath)
        configuration.processSamplingInterval = .zero
        // Under simulation every thread's instructions count: the writer,
        // whose wake-ups follow the clock, sleeps until the session stops.
        if instructions?.countsOnly == true { configuration.flushInterval = .seconds(3600) }
        // Warm-up iterations are not sampled: nothing keeps their samples.
        if tracePath != nil, measured { configuration.cpuProfile = cpuProfile }
        if !test.resourceUsageIntervals.isEmpty {
            configuration.resourceUsage = .intervals(named: test.resourceUsageIntervals)
        }
        let session = try TraceSession.start(configuration)
        if instructions?.countsOnly == true { Self.letWriterSettle(session) }
        if let profile = configuration.cpuProfile {
            Self.shiftSamplingPhase(periodNanoseconds: profile.periodNanoseconds)
        }
        let context = PerfContext(iteration: iteration)
        let counting = countSelection
        let before: ResourceReading
        let after: ResourceReading
        let wall: UInt64
        let counts: [PerfMetric]
        // Warm-up iterations are not counted: nothing keeps their counts.
        let counter = measured ? instructions : nil
        let writerID = session.backgroundThreadID
        let label = Array("strobe \(test.name) iteration \(iteration)".utf8CString)
        var reading: InstructionReading?
        // The measure block's edges on the CPU samples' clock.
        var window = (lowerBound: UInt64(0), upperBound: UInt64.max)
        do {
            // The windows nest: the resource readings outermost, then the
            // instruction count, the exact counts and the wall clock.
            switch blocks.body {
            case .sync(let measure):
                before = ResourceReading(session: session, thread: Self.hasThreadUsage)
                counter?.begin(excluding: writerID)
                ExactCounts.begin(counting)
                window.lowerBound = ProcessMeasurements.boottimeNanoseconds()
                let start = ProcessMeasurements.monotonicNanoseconds()
                try Self.measure(measure, context)
                wall = ProcessMeasurements.monotonicNanoseconds() - start
                window.upperBound = ProcessMeasurements.boottimeNanoseconds()
                let raw = ExactCounts.stop(counting)
                reading = try counter?.end(label: label)
                counts = ExactCounts.metrics(raw, counting)
                after = ResourceReading(session: session, thread: Self.hasThreadUsage)
            case .async(let measure):
                before = ResourceReading(session: session, thread: false)
                counter?.begin(excluding: writerID)
                ExactCounts.begin(counting)
                window.lowerBound = ProcessMeasurements.boottimeNanoseconds()
                let start = ProcessMeasurements.monotonicNanoseconds()
                try await measure(context)
                wall = ProcessMeasurements.monotonicNanoseconds() - start
                window.upperBound = ProcessMeasurements.boottimeNanoseconds()
                let raw = ExactCounts.stop(counting)
                reading = try counter?.end(label: label)
                counts = ExactCounts.metrics(raw, counting)
                after = ResourceReading(session: session, thread: false)
            }
        } catch let error as InstructionCountError {
            ExactCounts.abandon()
            try? session.stop()
            throw error
        } catch {
            counter?.abandon()
            ExactCounts.abandon()
            try? session.stop()
            throw PerfTestError.blockFailed("measure", error)
        }
        let writerThread = session.backgroundThreadID
        try session.stop()
        // The iteration's trace, read once for its metrics and its samples:
        // a file the metrics cannot do without fails the iteration; one only
        // the profile wanted counts as an iteration with no samples.
        let sampled = measured && profile != nil
        var traceBytes: [UInt8]?
        if let tracePath, !test.metrics.isEmpty {
            traceBytes = try TraceReader.readFile(tracePath)
        } else if let tracePath, sampled {
            traceBytes = try? TraceReader.readFile(tracePath)
        }
        if sampled {
            Self.addSamples(
                of: traceBytes, within: window.lowerBound...window.upperBound, leavingOut: writerThread, to: &profile)
        }
        if let teardown = blocks.teardown {
            do { try await teardown() } catch { throw PerfTestError.blockFailed("teardown", error) }
        }
        var values = Self.resourceMetrics(wall: wall, before: before, after: after) + counts
        if let reading {
            values.append(
                PerfMetric(name: "instructions", unit: "count", better: .lower, samples: [Double(reading.instructions)])
            )
            if let counts = reading.profile {
                if instructionProfile == nil { instructionProfile = counts } else { instructionProfile?.merge(counts) }
            }
        }
        var criticalPaths: [(interval: String, iteration: CriticalPathRecord.Iteration)] = []
        if !test.metrics.isEmpty, let tracePath, let traceBytes {
            let trace = TraceReader.read(bytes: traceBytes, source: tracePath)
            for metric in test.metrics {
                let reading = metric.reading(in: trace)
                if let value = reading.value {
                    values.append(
                        PerfMetric(
                            name: metric.name, unit: metric.unit(in: trace), better: metric.better,
                            samples: [value]))
                }
                if let path = reading.criticalPath { criticalPaths.append(path) }
            }
        }
        values += context.values
        return IterationSample(wall: Double(wall), values: values, criticalPaths: criticalPaths)
    }

    /// Spins for a random share of one sampling period of the thread's CPU
    /// time, between the session's start (where the thread's sampler starts
    /// counting) and the measure block.
    ///
    /// A sampler's period is fixed, and every iteration starts a session of
    /// its own; without this, the samples of every iteration of every
    /// process would fall at the same points of a measure block that
    /// repeats its work in a loop, and a function the loop passes through
    /// between two such points would be over- or undercounted in every one
    /// of them alike: a bias no number of processes averages out, which a
    /// change in the length of the loop then shows as a change in that
    /// function. With a uniformly random phase, each sample falls in a
    /// function with a probability proportional to the function's time.
    static func shiftSamplingPhase(periodNanoseconds period: UInt64) {
        let delay = UInt64.random(in: 0..<max(period, 1))
        let start = ProcessMeasurements.threadCPUNanoseconds()
        var spins: UInt64 = 0
        while ProcessMeasurements.threadCPUNanoseconds() &- start < delay { spins &+= 1 }
        if spins == .max { print(spins) }
    }

    /// Waits until the session's writer thread has started up and is
    /// blocked in its first wait, so that none of its start-up is counted
    /// in the measure block under simulation or emulation, which count
    /// every thread. A fixed pause is not enough: on a loaded machine an
    /// emulated writer's start-up (about 1,800 instructions) landed in
    /// one window in three. Gives up after two seconds.
    static func letWriterSettle(_ session: TraceSession) {
        guard session.backgroundThread != nil else { return }
        var waited = 0
        while waited < 20_000 {
            if session.backgroundThreadHasWaited, let id = session.backgroundThreadID, ThreadState.isBlocked(id) {
                return
            }
            usleep(100)
            waited += 1
        }
    }

    /// Adds the CPU samples of the iteration's trace (its bytes; nil when
    /// the file could not be read) taken within the measure block (`window`,
    /// CLOCK_BOOTTIME) to `profile`, but for those of the session's own
    /// writer thread.
    private static func addSamples(
        of trace: [UInt8]?, within window: ClosedRange<UInt64>, leavingOut writerThread: Int32?,
        to profile: inout CallStackProfileBuilder?
    ) {
        guard let trace else {
            profile?.finishIteration(lostSamples: 0, method: nil)
            return
        }
        let samples = CPUProfile.read(bytes: trace)
        var counts: [Int: Int] = [:]
        for sample in samples.samples
        where window.contains(sample.time) && writerThread.map({ Int64($0) != sample.tid }) ?? true {
            counts[sample.stack, default: 0] += 1
        }
        for (stack, count) in counts.sorted(by: { $0.key < $1.key }) where samples.stacks.indices.contains(stack) {
            profile?.add(samples.stacks[stack].map { samples.functions[$0] }, samples: count)
        }
        profile?.finishIteration(
            lostSamples: max(samples.lostSamples ?? 0, samples.lostRecords), method: samples.method)
    }

    /// The counts this runner takes: those its options ask for that the
    /// process can take.
    var countSelection: ExactCounts.Selection {
        ExactCounts.Selection(allocations: options.countAllocations, retains: options.countRetains)
            .intersection(.available)
    }

    /// Runs a synchronous measure block outside any actor.
    private static func measure(_ body: @Sendable (PerfContext) throws -> Void, _ context: PerfContext) throws {
        try body(context)
    }

    /// Whether the system measures a thread's own rusage; where it does not,
    /// no `thread.*` metric is written rather than a process figure under a
    /// thread's name.
    static let hasThreadUsage = ProcessMeasurements.threadUsageIsPerThread

    /// The process's resource usage at one edge of a measure block, the CPU
    /// time of the session's own background thread, and for synchronous
    /// tests the measuring thread's usage.
    ///
    /// Strobe's thread is left out through its CPU clock
    /// (`pthread_getcpuclockid`), read at both edges: one syscall, exact to
    /// the nanosecond, and readable while the thread runs. Summing
    /// `/proc/self/task/*/stat` instead would cost an open and a read per
    /// thread, counts in 10 ms ticks, and loses the threads that exit during
    /// the block, whose time `RUSAGE_SELF` keeps.
    struct ResourceReading {
        var process = ResourceUsage()
        var thread: ResourceUsage?
        var strobeCPU: UInt64 = 0

        /// Reads an edge. Both edges read in the same order, so the few
        /// hundred nanoseconds between the reads shift both alike.
        init(session: TraceSession, thread readThread: Bool) {
            let strobe = session.backgroundCPUTime.components
            strobeCPU =
                UInt64(clamping: strobe.seconds) &* 1_000_000_000
                &+ UInt64(clamping: strobe.attoseconds / 1_000_000_000)
            process = ResourceUsage.process()
            if readThread { thread = ResourceUsage.thread() }
        }

        init(process: ResourceUsage, thread: ResourceUsage?, strobeCPU: UInt64) {
            self.process = process
            self.thread = thread
            self.strobeCPU = strobeCPU
        }
    }

    static func resourceMetrics(wall: UInt64, before: ResourceReading, after: ResourceReading) -> [PerfMetric] {
        func delta<Count: BinaryInteger>(_ a: Count, _ b: Count) -> Double { b >= a ? Double(b - a) : 0 }
        let user = delta(before.process.userNanoseconds, after.process.userNanoseconds)
        let system = delta(before.process.systemNanoseconds, after.process.systemNanoseconds)
        // Linux measures each thread's run time exactly but splits it into
        // user and system time in the ratio of timer-tick samples, so below a
        // tick any split is an estimate. Strobe's exact total is removed in
        // the proportion of the block's own split: user + system stays
        // exactly the process's CPU time less Strobe's.
        let total = user + system
        let strobe = min(delta(before.strobeCPU, after.strobeCPU), total)
        let kept = total > 0 ? (total - strobe) / total : 0
        var metrics = [
            PerfMetric(name: "wall", unit: "ns", samples: [Double(wall)]),
            PerfMetric(name: MetricKind.cpuUserName, unit: "ns", samples: [user * kept]),
            PerfMetric(name: MetricKind.cpuSystemName, unit: "ns", samples: [system * kept]),
        ]
        metrics += usageMetrics(prefix: "process", before: before.process, after: after.process)
        if let threadBefore = before.thread, let threadAfter = after.thread {
            metrics += changes(
                "thread.cpu", unit: "ns", of: [("user", \.userNanoseconds), ("system", \.systemNanoseconds)],
                from: threadBefore, to: threadAfter)
            metrics += usageMetrics(prefix: "thread", before: threadBefore, after: threadAfter)
        }
        return metrics
    }

    /// Context switches and page faults between two readings, named
    /// `PREFIX.context_switches.voluntary` and so on.
    static func usageMetrics(prefix: String, before: ResourceUsage, after: ResourceUsage) -> [PerfMetric] {
        changes(
            prefix, unit: "count",
            of: [
                ("context_switches.voluntary", \.voluntarySwitches),
                ("context_switches.involuntary", \.involuntarySwitches),
                ("faults.minor", \.minorFaults),
                ("faults.major", \.majorFaults),
            ],
            from: before, to: after)
    }

    /// A metric `PREFIX.NAME` in `unit` for each count: how much it grew
    /// from `before` to `after` (0 where it did not).
    private static func changes(
        _ prefix: String, unit: String, of counts: [(name: String, count: KeyPath<ResourceUsage, Int64>)],
        from before: ResourceUsage, to after: ResourceUsage
    ) -> [PerfMetric] {
        counts.map { name, count in
            let (a, b) = (before[keyPath: count], after[keyPath: count])
            return PerfMetric(name: "\(prefix).\(name)", unit: unit, samples: [b >= a ? Double(b - a) : 0])
        }
    }

    /// Moves the iteration's trace into `folder` (`<suite>/<test>`) as
    /// `iter-007-12.34ms.pftrace`.
    private static func keep(_ path: String, iteration: Int, wall: Double, in folder: String) -> String? {
        let destination = "\(folder)/" + String(format: "iter-%03d-%.2fms.pftrace", iteration, wall / 1e6)
        // rename(2) replaces an older file of the same name; across file
        // systems FileManager copies.
        if rename(path, destination) == 0 { return destination }
        try? FileManager.default.removeItem(atPath: destination)
        return (try? FileManager.default.moveItem(atPath: path, toPath: destination)) != nil ? destination : nil
    }

}
