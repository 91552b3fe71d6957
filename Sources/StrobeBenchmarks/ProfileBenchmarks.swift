import CStrobe
import Foundation
import ProfileWorkload
import Strobe
import StrobeReader
import StrobeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `make bench profile`: what the CPU profiler costs and how right it is.
///
/// - The hot path: begin, end and counter with a profile at 999 Hz against
///   the same calls without one, sessions alternating in one run.
/// - CPU overhead: a fixed amount of CPU-bound work on two threads, the
///   process's CPU time (every thread's, the writer's and the kernel's
///   sampling included) with a profile at 999 Hz and at 100 Hz, and with the
///   kernel's sampling alone, each against a run without a profile beside
///   it: the median of the pairs' ratios.
/// - Accuracy: `ProfileWorkload` (60/30/10% of each thread's CPU time in
///   three functions) recorded repeatedly; each function's share of the
///   samples against its true share, the worst error over the runs, and the
///   share of each interval's samples that fall in the function it called.
enum ProfileBenchmarks {
    static let runs = 7
    /// Pairs of runs with and without a profile per overhead figure
    /// (`STROBE_BENCH_PROFILE_PAIRS`, default 11).
    static let overheadPairs = ProcessInfo.processInfo.environment["STROBE_BENCH_PROFILE_PAIRS"].flatMap(Int.init) ?? 11

    static func run() {
        hotPathFigures()
        overheadFigures()
        accuracyFigures()
    }

    static func configuration(_ path: String, profile: TraceConfiguration.CPUProfile?) -> TraceConfiguration {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.cpuProfile = profile
        return configuration
    }

    /// The median cost per call of `body` (which returns elapsed ns for
    /// `events` calls), with and without a profile, sessions alternating.
    static func alternating(_ events: Int, _ body: () -> Double) -> (on: Double, off: Double) {
        let path = CoreBenchmarks.temporaryPath("profile-hot")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var on: [Double] = []
        var off: [Double] = []
        for _ in 0..<runs {
            for profile in [nil, TraceConfiguration.CPUProfile(frequency: 999)] {
                let session = try! TraceSession.start(configuration(path, profile: profile))
                let cost = body() / Double(events)
                try! session.stop()
                if profile == nil { off.append(cost) } else { on.append(cost) }
            }
        }
        return (median(on), median(off))
    }

    static func hotPathFigures() {
        let events = 1_000_000
        let begin = alternating(events) {
            let elapsed = timeBegins(events)
            _ = timeEnds(events)
            return elapsed
        }
        let end = alternating(events) {
            _ = timeBegins(events)
            return timeEnds(events)
        }
        let counter = alternating(events) { timeCounters(events) }
        for (name, figures) in [("begin", begin), ("end", end), ("counter", counter)] {
            Figure(
                name: "\(name) with a CPU profile at 999 Hz", value: figures.on, unit: "ns/event",
                baselineName: "\(name) without a profile, same run", baselineValue: figures.off,
                target: "ratio <= 1.05"
            ).printLine()
        }
    }

    /// The process's CPU time (user and system, all threads), in ns.
    static func processCPUTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) * 1e9 + Double(usage.ru_utime.tv_usec) * 1e3
        let system = Double(usage.ru_stime.tv_sec) * 1e9 + Double(usage.ru_stime.tv_usec) * 1e3
        return user + system
    }

    /// The kernel's sampling alone on each work thread, with no Strobe
    /// profile: a perf event at `frequency` whose ring nobody reads, asking
    /// for what Strobe's samplers ask (`asStrobe`: time, CPU, user call
    /// chain, stack words) or for the thread id alone.
    struct KernelFloor {
        var frequency: Int
        var asStrobe: Bool
        /// Whether the ring is drained (thrown away unread) every 100 ms,
        /// as the session's writer drains its rings, so that the kernel
        /// writes every sample.
        var drained = false
    }

    /// One overhead figure's setting: a profile or a floor, the work, and
    /// whether the waiting thread switches 2,000 times a second.
    struct OverheadSetting {
        var name: String
        var profile: TraceConfiguration.CPUProfile?
        var floor: KernelFloor? = nil
        var iterations = 200_000_000
        var switching = false
        /// The goal the figure is held to.
        var target = "none"
    }

    /// The floors' events, which the waiting thread drains.
    final class FloorRings: @unchecked Sendable {
        private let lock = NSLock()
        private var rings: [OpaquePointer] = []

        func add(_ ring: OpaquePointer?) {
            guard let ring else { return }
            lock.withLock { rings.append(ring) }
        }

        func remove(_ ring: OpaquePointer?) {
            lock.withLock { rings.removeAll { $0 == ring } }
        }

        func discardAll() {
            lock.withLock { for ring in rings { _ = cstrobe_perf_floor_discard(ring) } }
        }
    }

    /// A fixed amount of CPU-bound work on two threads, each inside one
    /// interval; returns the process CPU time it took with `profile` (or,
    /// with `floor`, the kernel's sampling alone), and the part the
    /// session's background writer took, in ns.
    static func fixedWork(
        _ profile: TraceConfiguration.CPUProfile?, floor: KernelFloor? = nil, iterations: Int = 200_000_000,
        switching: Bool = false
    ) -> (
        total: Double, writer: Double
    ) {
        let path = CoreBenchmarks.temporaryPath("profile-overhead")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try! TraceSession.start(configuration(path, profile: profile))
        let before = processCPUTime()
        let rings = FloorRings()
        let finished = DispatchSemaphore(value: 0)
        let threads = (0..<2).map { _ in
            Thread {
                var error: Int32 = 0
                let sampler = floor.flatMap { floor in
                    cstrobe_perf_floor_open(
                        UInt64(1_000_000_000 / floor.frequency), floor.asStrobe ? 1 : 0, &error)
                }
                if floor?.drained == true { rings.add(sampler) }
                Trace.begin("fixed work")
                // Used, so the work is not optimized away.
                if iterations > 0, FixedWork.run(iterations: iterations) == 0 { print("0") }
                Trace.end()
                rings.remove(sampler)
                cstrobe_perf_floor_close(sampler)
                finished.signal()
            }
        }
        for thread in threads { thread.start() }
        // Wait for both threads, waking every 100 ms to drain the floors'
        // rings. (Polling every 0.5 ms instead made this thread switch
        // 2,000 times a second, and a profile samples every thread: each
        // switch of a thread with a perf event costs the kernel more, which
        // added about 0.3% to every profile's figure.)
        // Switching, it wakes every 0.5 ms and drains every 200th time.
        let (tick, wakesPerDrain) = switching ? (DispatchTimeInterval.microseconds(500), 200) : (.milliseconds(100), 1)
        var wakes = 0
        for _ in threads {
            while finished.wait(timeout: .now() + tick) == .timedOut {
                wakes += 1
                if wakes % wakesPerDrain == 0 { rings.discardAll() }
            }
        }
        try! session.stop()
        let (seconds, attoseconds) = session.backgroundCPUTime.components
        return (processCPUTime() - before, Double(seconds) * 1e9 + Double(attoseconds) / 1e9)
    }

    static func overheadFigures() {
        let cases: [(String, TraceConfiguration.CPUProfile, String)] = [
            ("a profile at 999 Hz", .init(frequency: 999), "ratio <= 1.03"),
            ("a profile at 100 Hz", .init(frequency: 100), "ratio <= 1.005"),
            ("a profile at 10 Hz (the perf events' cost beyond their samples)", .init(frequency: 10), "none"),
            (
                "the CPU-time timer asked for 999 Hz (it samples on the kernel's tick)",
                .init(frequency: 999, method: .cpuTimer), "none"
            ),
        ]
        // The floor: what the kernel's sampling costs with nothing of Strobe
        // reading it, asking for what Strobe asks and for the least.
        let floors: [(String, KernelFloor)] = [
            (
                "the kernel's sampling alone at 999 Hz, asking what Strobe asks (call chain, stack words), ring never "
                    + "read",
                KernelFloor(frequency: 999, asStrobe: true)
            ),
            (
                "the kernel's sampling alone at 999 Hz, thread id only, ring never read",
                KernelFloor(frequency: 999, asStrobe: false)
            ),
            (
                "the kernel's sampling alone at 100 Hz, asking what Strobe asks, ring never read",
                KernelFloor(frequency: 100, asStrobe: true)
            ),
            (
                "the kernel's sampling alone at 999 Hz, asking what Strobe asks, ring drained unread every 100 ms",
                KernelFloor(frequency: 999, asStrobe: true, drained: true)
            ),
            (
                "the kernel's sampling alone at 100 Hz, asking what Strobe asks, ring drained unread every 100 ms",
                KernelFloor(frequency: 100, asStrobe: true, drained: true)
            ),
        ]
        _ = fixedWork(nil)
        _ = fixedWork(.init(frequency: 999))
        // Each configuration is paired with a run without a profile right
        // beside it, in an order a coin picks per pair, and judged by the
        // pairs' ratios: the machine's drift between pairs cancels, which
        // a ratio of two medians taken a minute apart does not.
        var generator = SystemRandomNumberGenerator()
        // Beside them: what a session's profile costs with no work at all
        // (opening an event per thread, its ring, closing them: paid once a
        // session), and the 100 Hz profile over four times the work, where
        // that once-per-session cost weighs a quarter as much.
        // And the cost a profile puts on a thread that switches often: the
        // waiting thread polls every 0.5 ms (2,000 switches a second) in
        // both runs of the pair, and the profile samples it too.
        let configurations =
            floors.map { OverheadSetting(name: $0.0, profile: nil, floor: $0.1) }
            + cases.map { OverheadSetting(name: $0.0, profile: $0.1, target: $0.2) }
            + [
                OverheadSetting(
                    name: "a profile at 100 Hz, four times the work", profile: .init(frequency: 100),
                    iterations: 800_000_000, target: "ratio <= 1.005"),
                OverheadSetting(
                    name: "a profile at 999 Hz, no work (a session's start and stop)", profile: .init(frequency: 999),
                    iterations: 0),
                OverheadSetting(
                    name: "a profile at 100 Hz, a thread beside the work switching 2,000 times a second",
                    profile: .init(frequency: 100), switching: true),
            ]
        var pairs = [[(on: (total: Double, writer: Double), off: (total: Double, writer: Double))]](
            repeating: [], count: configurations.count)
        for _ in 0..<overheadPairs {
            for (index, configuration) in configurations.enumerated() {
                let offFirst = Bool.random(using: &generator)
                let iterations = configuration.iterations
                let switching = configuration.switching
                var off = offFirst ? fixedWork(nil, iterations: iterations, switching: switching) : (0, 0)
                let on = fixedWork(
                    configuration.profile, floor: configuration.floor, iterations: iterations, switching: switching)
                if !offFirst { off = fixedWork(nil, iterations: iterations, switching: switching) }
                pairs[index].append((on, off))
            }
        }
        // Quartiles at the nearest rank of (count − 1)·share, so that the
        // two sit symmetrically around the median of an odd count.
        func quartile(_ values: [Double], _ share: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(Int(Double(sorted.count - 1) * share + 0.5), sorted.count - 1)]
        }
        for (index, configuration) in configurations.enumerated() {
            let ratios = pairs[index].map { $0.on.total / $0.off.total }
            var extra = [
                "ratio_p25": quartile(ratios, 0.25), "ratio_p75": quartile(ratios, 0.75),
                "pairs": Double(ratios.count),
            ]
            if configuration.profile != nil {
                extra["writer_ms"] = median(pairs[index].map(\.on.writer)) / 1e6
                extra["writer_ms_without_profile"] = median(pairs[index].map(\.off.writer)) / 1e6
            }
            if configuration.iterations == 0 {
                // No work: the difference is the figure, not the ratio.
                let differences = pairs[index].map { ($0.on.total - $0.off.total) / 1e6 }
                Figure(
                    name: "CPU time of a session's start and stop with \(configuration.name)",
                    value: median(pairs[index].map(\.on.total)) / 1e6, unit: "ms",
                    baselineName: "a session's start and stop without a profile, run beside it",
                    baselineValue: median(pairs[index].map(\.off.total)) / 1e6,
                    target: "none",
                    extra: [
                        "difference_ms_median": median(differences),
                        "difference_ms_p25": quartile(differences, 0.25),
                        "difference_ms_p75": quartile(differences, 0.75),
                    ]
                ).printLine()
                continue
            }
            Figure(
                name: "CPU-bound work on 2 threads, process CPU time with \(configuration.name)",
                value: median(pairs[index].map(\.on.total)) / 1e6, unit: "ms",
                baselineName: "the same work without a profile, run beside it (ratio: median of the pairs' ratios)",
                baselineValue: median(pairs[index].map(\.off.total)) / 1e6,
                ratioOverride: median(ratios), target: configuration.target, extra: extra
            ).printLine()
        }
    }

    static func accuracyFigures() {
        let path = CoreBenchmarks.temporaryPath("profile-accuracy")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let repetitions = 5
        var shares = [[Double]](repeating: [], count: ProfileWorkload.truth.count)
        var attributed = [[Double]](repeating: [], count: ProfileWorkload.truth.count)
        var samples: [Double] = []
        var lost: UInt64 = 0
        for _ in 0..<repetitions {
            let session = try! TraceSession.start(configuration(path, profile: .init(frequency: 999)))
            ProfileWorkload.run(threads: 2, milliseconds: 1000)
            try! session.stop()
            lost += session.statistics.lostCPUSamples
            let trace = try! TraceReader.read(contentsOf: path)
            let profile = try! CPUProfile.read(contentsOf: path)
            let names = Set(ProfileWorkload.truth.map(\.function))
            let workload = profile.samples.filter { sample in
                profile.stacks[sample.stack].contains { names.contains(profile.functions[$0]) }
            }
            samples.append(Double(workload.count))
            for (index, truth) in ProfileWorkload.truth.enumerated() {
                shares[index].append(profile.share(of: workload) { $0 == truth.function })
                let inside = profile.samples(within: trace.intervals(named: ProfileWorkload.intervalNames[index]))
                attributed[index].append(profile.share(of: inside) { $0 == truth.function })
            }
        }
        for (index, truth) in ProfileWorkload.truth.enumerated() {
            let mean = shares[index].reduce(0, +) / Double(repetitions)
            let worst = shares[index].map { abs($0 - truth.share) }.max() ?? 0
            Figure(
                name: "share of \(truth.function) in the workload's samples, mean of \(repetitions) runs",
                value: mean * 100, unit: "%", baselineName: "its true share of CPU time",
                baselineValue: truth.share * 100,
                target: "worst_error_points <= 3",
                extra: [
                    "worst_error_points": worst * 100, "samples_per_run": samples.reduce(0, +) / Double(repetitions),
                    "lost_samples": Double(lost),
                ]
            ).printLine()
            Figure(
                name: "samples inside \"\(ProfileWorkload.intervalNames[index])\" attributed to the function it calls",
                value: (attributed[index].min() ?? 0) * 100, unit: "%", baselineName: "all of them", baselineValue: 100,
                target: "value >= 95 (worst of \(repetitions) runs)"
            ).printLine()
        }
    }
}

/// CPU-bound work of a fixed size, for the overhead figures.
enum FixedWork {
    @inline(never)
    static func run(iterations: Int) -> UInt64 {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<iterations {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
        }
        return state
    }
}
