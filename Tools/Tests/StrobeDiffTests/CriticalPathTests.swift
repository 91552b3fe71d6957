import StrobeFlameGraph
import StrobeProcessRunner
import StrobeReader
import StrobeStatistics
import StrobeTraceComparison
import Testing

/// The critical path of an iteration whose two workers run in parallel,
/// and of the same iteration with the second worker waiting for the first
/// (same work, so the same instructions and allocations).
@Suite struct CriticalPathTests {
    static let ms: UInt64 = 1_000_000

    /// An iteration on thread 1 that starts two workers (threads 2 and 3)
    /// of 48 ms each (its `dispatch`, 1 ms), waits for them (`wait for
    /// workers`) and merges for 9 ms; `serial` makes
    /// worker 1 start when worker 0 ends (a lock held over its work).
    /// Times move by up to ±0.5 ms with `seed`.
    static func iteration(serial: Bool, seed: UInt64) -> (Interval, [Interval]) {
        var generator = SeededGenerator(seed: seed)
        func jitter(_ value: UInt64) -> UInt64 { value + UInt64(generator.uniform() * Double(ms / 2)) }
        let start0 = jitter(2 * ms)
        let end0 = start0 + jitter(48 * ms)
        let start1 = serial ? end0 + 40_000 : jitter(2 * ms)
        let end1 = start1 + jitter(48 * ms)
        let merge = max(end0, end1) + jitter(ms / 2)
        let end = merge + jitter(9 * ms)
        let root = Interval(name: "apply lens", track: 1, tid: 1, start: 0, duration: end)
        return (
            root,
            [
                root,
                Interval(name: "lens worker 0", track: 2, tid: 2, start: start0, duration: end0 - start0),
                Interval(name: "lens worker 1", track: 3, tid: 3, start: start1, duration: end1 - start1),
                Interval(name: "dispatch", track: 1, tid: 1, start: 0, duration: ms, depth: 1),
                Interval(name: "wait for workers", track: 1, tid: 1, start: ms, duration: merge - ms, depth: 1),
                Interval(name: "merge", track: 1, tid: 1, start: merge, duration: end - merge, depth: 1),
            ]
        )
    }

    @Test func parallelWorkersPutOneOnThePathAndSerializedOnesBoth() throws {
        let (root, intervals) = Self.iteration(serial: false, seed: 1)
        let parallel = try #require(CriticalPath.of(root, in: intervals))
        #expect(parallel.segments.filter { $0.name?.hasPrefix("lens worker") == true }.count == 1)
        #expect(parallel.segments.contains { $0.name == "merge" })
        #expect(parallel.length > 56 * Self.ms && parallel.length < 60 * Self.ms, "\(parallel.length)")
        #expect(parallel.segments.reduce(0) { $0 + $1.duration } == parallel.wall)
        // The main thread waited for the worker that ended last, which
        // waited for the dispatch.
        #expect(parallel.waits.map(\.waiter) == ["lens worker 1", "wait for workers"], "\(parallel.waits)")
        #expect(
            parallel.waits.map(\.waitedFor) == ["dispatch", "lens worker 1"]
                || parallel.waits.map(\.waitedFor) == ["dispatch", "lens worker 0"])

        let (serialRoot, serialIntervals) = Self.iteration(serial: true, seed: 1)
        let serial = try #require(CriticalPath.of(serialRoot, in: serialIntervals))
        #expect(serial.length > 104 * Self.ms && serial.length < 109 * Self.ms, "\(serial.length)")
        #expect(serial.waits.contains { $0.waiter == "lens worker 1" && $0.waitedFor == "lens worker 0" })
        let shares = serial.shares
        #expect(abs((shares["lens worker 0"] ?? 0) - (shares["lens worker 1"] ?? 0)) < 0.02)
        #expect((shares["lens worker 0"] ?? 0) > 0.4)
    }

    @Test func serializingIsNamedInTenOfTenAndNothingInTheAAComparison() throws {
        var regressions = 0
        var quiet = 0
        for seed in 1...10 {
            let (root, intervals) = Self.iteration(serial: false, seed: UInt64(seed))
            let (againRoot, again) = Self.iteration(serial: false, seed: UInt64(seed) + 100)
            let (serialRoot, serial) = Self.iteration(serial: true, seed: UInt64(seed) + 200)
            let base = try #require(CriticalPath.of(root, in: intervals))
            let same = try #require(CriticalPath.of(againRoot, in: again))
            let slow = try #require(CriticalPath.of(serialRoot, in: serial))
            if Double(slow.length) / Double(base.length) > 1.5,
                slow.waits.contains(where: { $0.waiter == "lens worker 1" && $0.waitedFor == "lens worker 0" })
            {
                regressions += 1
            }
            if abs(Double(same.length) / Double(base.length) - 1) < 0.05,
                !same.waits.contains(where: {
                    $0.waiter?.hasPrefix("lens worker") == true && $0.waitedFor.hasPrefix("lens worker")
                })
            {
                quiet += 1
            }
        }
        #expect(regressions == 10 && quiet == 10, "\(regressions) of 10 named, \(quiet) of 10 A/A quiet")
    }

    @Test func aFlowLeadsTheWalkToItsSource() throws {
        let ms = Self.ms
        let root = Interval(name: "frame", track: 1, tid: 1, start: 0, duration: 30 * ms)
        // Thread 1 waits from 1 ms to 20 ms; two workers end then, the flow
        // names the one it waited for, the one that did not end last.
        let producer = Interval(
            name: "decode", track: 2, tid: 2, start: 1 * ms, duration: 18 * ms, flowIDs: [7])
        let other = Interval(name: "prefetch", track: 3, tid: 3, start: 1 * ms, duration: 18 * ms + 150_000)
        let consumer = Interval(
            name: "draw", track: 1, tid: 1, start: 20 * ms, duration: 10 * ms, depth: 1, terminatingFlowIDs: [7])
        let path = try #require(CriticalPath.of(root, in: [root, producer, other, consumer]))
        #expect(path.waits == [CriticalPath.Wait(waiter: "draw", waitedFor: "decode", byFlow: true)])
        #expect(path.segments.contains { $0.name == "decode" } && !path.segments.contains { $0.name == "prefetch" })
    }

    /// A side of 30 iterations, parallel or serialized, as one trace.
    static func side(serial: Bool, seed: UInt64) -> TraceSide {
        var side = TraceSide()
        var intervals: [Interval] = []
        for iteration in 0..<30 {
            let (_, parts) = Self.iteration(serial: serial, seed: seed * 100 + UInt64(iteration))
            let offset = UInt64(iteration) * 200 * ms
            intervals += parts.map { part in
                var moved = part
                moved.start += offset
                return moved
            }
        }
        side.add(
            intervals: intervals, profile: CPUProfile(), source: "s\(seed).pftrace", criticalPathOf: ["apply lens"])
        return side
    }

    @Test func diffTracesCallsTheLongerPathSlowerAndNamesTheNewWait() throws {
        let parallel = Self.side(serial: false, seed: 1)
        let comparison = TraceComparison(baseline: parallel, candidate: Self.side(serial: true, seed: 2))
        let apply = try #require(comparison.intervals.first { $0.name == "apply lens" })
        #expect(apply.criticalPath?.verdict == .slower)
        #expect(apply.newWaits == ["lens worker 1 waits for lens worker 0"], "\(apply.newWaits)")
        #expect(comparison.renderText().contains("now: lens worker 1 waits for lens worker 0"))
        let same = TraceComparison(baseline: parallel, candidate: Self.side(serial: false, seed: 3))
        let quiet = try #require(same.intervals.first { $0.name == "apply lens" })
        #expect(quiet.criticalPath?.verdict == .unchanged && quiet.newWaits.isEmpty, "\(quiet.newWaits)")
    }

    @Test func aSuiteNamesTheCriticalPathAsAnIntervalMetric() {
        #expect(TraceMetric.interval("apply lens", .criticalPath).name == "interval:apply lens:critical_path")
    }
}
