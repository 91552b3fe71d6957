import Foundation
import Strobe
import Synchronization
import Testing

@testable import StrobePerf

extension PerfRunnerTests {
    /// A test's `setupOnce`: once per process, outside every measured
    /// iteration, its value handed to every other block.
    @Suite struct SetupOnceTests {
        /// What `setupOnce` builds: an object, so the tests can tell the one
        /// instance from a second.
        final class Fixture: Sendable {
            let id = Int.random(in: 1...1_000_000)
        }

        /// Identities and counts seen by the blocks, across threads.
        final class Seen: Sendable {
            let setupOnceRuns = Atomic<Int>(0)
            let fixtures = Mutex<[(block: String, id: ObjectIdentifier)]>([])

            func saw(_ fixture: Fixture, in block: String) {
                fixtures.withLock { $0.append((block, ObjectIdentifier(fixture))) }
            }

            func blocks(seeing fixture: Fixture) -> [String: Int] {
                fixtures.withLock { seen in
                    var counts: [String: Int] = [:]
                    for entry in seen where entry.id == ObjectIdentifier(fixture) {
                        counts[entry.block, default: 0] += 1
                    }
                    return counts
                }
            }

            var all: Int { fixtures.withLock { $0.count } }
        }

        @Test func runsOncePerProcessAndItsValueReachesEveryBlock() async throws {
            let seen = Seen()
            let made = Mutex<Fixture?>(nil)
            let test = PerfTest(
                "once",
                setupOnce: {
                    seen.setupOnceRuns.add(1, ordering: .relaxed)
                    let fixture = Fixture()
                    made.withLock { $0 = fixture }
                    return fixture
                },
                setup: { fixture in seen.saw(fixture, in: "setup") },
                measure: { fixture, context in
                    seen.saw(fixture, in: "measure")
                    context.report("fixture id", Double(fixture.id))
                },
                teardown: { fixture in seen.saw(fixture, in: "teardown") }
            )
            var copy = test
            copy.name = "a copy of once"
            let runner = PerfRunnerTests.runner(iterations: 3, warmup: 2)
            let results = [await runner.run(test), await runner.run(test), await runner.run(copy)]

            #expect(seen.setupOnceRuns.load(ordering: .relaxed) == 1)
            let fixture = try #require(made.withLock { $0 })
            // Three runs of 2 warm-up and 3 measured iterations, every block
            // given the one fixture.
            #expect(seen.blocks(seeing: fixture) == ["setup": 15, "measure": 15, "teardown": 15])
            #expect(seen.all == 45)
            for result in results {
                #expect(result.error == nil)
                #expect(
                    result.metric("fixture id")?.samples == [
                        Double(fixture.id), Double(fixture.id), Double(fixture.id),
                    ])
            }
        }

        @Test func eachTestHasItsOwn() async {
            let runs = Atomic<Int>(0)
            func counted(_ name: String) -> PerfTest {
                PerfTest(name, setupOnce: { runs.add(1, ordering: .relaxed) }, measure: { _, _ in })
            }
            let runner = PerfRunnerTests.runner(iterations: 2, warmup: 0)
            _ = await runner.run(counted("first"))
            _ = await runner.run(counted("second"))
            #expect(runs.load(ordering: .relaxed) == 2)
        }

        @Test func runsOutsideEveryMeasuredIterationAndTraceSession() async throws {
            let setupEnded = Atomic<UInt64>(0)
            let sessionWasRecording = Atomic<Bool>(false)
            let measureStarts = Mutex<[UInt64]>([])
            let test = PerfTest(
                "slow once",
                metrics: [.interval("setup once", .count), .interval("work", .count)],
                setupOnce: { () -> Int in
                    // A session that starts here shows that no iteration's
                    // session is recording.
                    do {
                        try TraceSession.start(TraceConfiguration(outputPath: nil)).stop()
                    } catch {
                        sessionWasRecording.store(true, ordering: .relaxed)
                    }
                    Trace.interval("setup once") { usleep(200_000) }
                    setupEnded.store(ProcessMeasurements.monotonicNanoseconds(), ordering: .relaxed)
                    return 7
                },
                measure: { value, context in
                    measureStarts.withLock { $0.append(ProcessMeasurements.monotonicNanoseconds()) }
                    Trace.interval("work") { usleep(1_000) }
                    context.report("value", Double(value))
                }
            )
            let result = await PerfRunnerTests.runner(iterations: 4, warmup: 1).run(test)
            #expect(result.error == nil)
            let recording = sessionWasRecording.load(ordering: .relaxed)
            #expect(!recording)
            // The 200 ms of setupOnce are in no iteration's wall time...
            let wall = try #require(result.metric("wall")).samples
            #expect(wall.count == 4)
            #expect(wall.allSatisfy { $0 >= 1_000_000 && $0 < 100_000_000 })
            // ...nor in any iteration's trace...
            #expect(result.metric("interval:setup once:count")?.samples == [0, 0, 0, 0])
            #expect(result.metric("interval:work:count")?.samples == [1, 1, 1, 1])
            // ...and it ended before the first iteration (the warm-up) began.
            let starts = measureStarts.withLock { $0 }
            #expect(starts.count == 5)
            let ended = setupEnded.load(ordering: .relaxed)
            #expect(ended > 0)
            #expect(starts.allSatisfy { $0 > ended })
            #expect(result.metric("value")?.samples == [7, 7, 7, 7])
        }

        @Test func asyncMeasureBlocksGetTheValueToo() async {
            let runs = Atomic<Int>(0)
            let test = PerfTest(
                "async once",
                setupOnce: { () async -> [Int] in
                    runs.add(1, ordering: .relaxed)
                    try? await Task.sleep(for: .milliseconds(5))
                    return [1, 2, 3]
                },
                measureAsync: { numbers, context in
                    await Task.yield()
                    context.report("sum", Double(numbers.reduce(0, +)))
                }
            )
            let result = await PerfRunnerTests.runner(iterations: 3, warmup: 1).run(test)
            #expect(result.error == nil)
            #expect(runs.load(ordering: .relaxed) == 1)
            #expect(result.metric("sum")?.samples == [6, 6, 6])
            #expect(result.metric("thread.cpu.user") == nil)
        }

        @Test func aFailureIsReportedEveryRunWithoutRunningItAgain() async {
            let runs = Atomic<Int>(0)
            let measured = Atomic<Int>(0)
            let test = PerfTest(
                "fails once",
                setupOnce: { () throws -> Int in
                    runs.add(1, ordering: .relaxed)
                    throw PerfRunnerTests.Planned()
                },
                measure: { _, _ in measured.add(1, ordering: .relaxed) }
            )
            let runner = PerfRunnerTests.runner(iterations: 2, warmup: 1)
            for _ in 0..<2 {
                let result = await runner.run(test)
                #expect(result.error == "setupOnce failed: planned failure")
                #expect(result.metrics.isEmpty)
            }
            #expect(runs.load(ordering: .relaxed) == 1)
            #expect(measured.load(ordering: .relaxed) == 0)
        }

        @Test func callersAtTheSameTimeShareOneRun() async throws {
            let runs = Atomic<Int>(0)
            let once = SetupOnce { () async -> Fixture in
                runs.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .milliseconds(50))
                return Fixture()
            }
            let identities = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
                for _ in 0..<32 { group.addTask { ObjectIdentifier(try await once.value()) } }
                return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
            }
            #expect(runs.load(ordering: .relaxed) == 1)
            #expect(identities.count == 1)
        }
    }
}
