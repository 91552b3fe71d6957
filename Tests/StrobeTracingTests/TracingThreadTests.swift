#if StrobeTracing
import Foundation
import StrobeTestSupport
import Strobe
import StrobeReader
import StrobeTracing
import Synchronization
import Testing
import Tracing
import StrobeTestTraits

/// Spans that begin and end on different threads.
@Suite(.serialized, .processWide)
struct TracingThreadTests {
    @Test func spansEndOnOtherThreadsAndOverlappingSiblingsStayApart() async throws {
        let path = StrobeTracingTests.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let count = 40
        nonisolated(unsafe) var beginThreads: [UInt64] = []
        nonisolated(unsafe) var endThreads: [UInt64] = []
        let trace = try await StrobeTracingTests.record(path) {
            // The ending thread records first, so the writer drains it before
            // the thread that begins the spans: ends reach it before begins.
            let queue = SpanQueue()
            let ender = Thread {
                Trace.instant("ender ready")
                while let span = queue.take() {
                    endThreads.append(Thread.currentID)
                    span.end()
                }
            }
            ender.start()
            while !queue.isReady { usleep(100) }
            let starter = Thread {
                for index in 0..<count {
                    let span = InstrumentationSystem.tracer.startSpan("hop \(index)", context: .topLevel)
                    span.attributes["index"] = index
                    // Half are renamed, on the thread that ends them.
                    if index % 2 == 1 { span.operationName = "hop \(index) renamed" }
                    beginThreads.append(Thread.currentID)
                    queue.put(span)
                }
                queue.close()
            }
            starter.start()
            while !ender.isFinished { usleep(1000) }

            // Overlapping children of one parent, in a task group: each part
            // lasts at least 20 ms and ends only once all four have started.
            let started = StartCount()
            try await withSpan("fan out") { _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<4 {
                        group.addTask {
                            try await withSpan("part \(index)") { _ in
                                started.increment()
                                try await Task.sleep(nanoseconds: 20_000_000)
                                while started.value < 4 {
                                    try await Task.sleep(nanoseconds: 1_000_000)
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        #expect(zip(beginThreads, endThreads).allSatisfy { $0 != $1 })
        #expect(trace.loss.unmatchedEnds == 0)
        for index in 0..<count {
            let name = index % 2 == 1 ? "hop \(index) renamed" : "hop \(index)"
            let hop = try #require(trace.intervals(named: name).first)
            #expect(hop.isAsync && hop.tid == nil)
            #expect(hop.duration != nil)
            #expect(hop.arguments["index"] == .int(Int64(index)))
        }
        let parent = try #require(trace.intervals(named: "fan out").first)
        let parts = (0..<4).compactMap { trace.intervals(named: "part \($0)").first }
        #expect(parts.count == 4)
        #expect(Set(parts.map(\.track)).count == 4)
        for part in parts {
            #expect(trace.tracks[part.track]?.parent == parent.track)
            #expect(part.duration.map { $0 >= 20_000_000 } == true)
            #expect(part.end! <= parent.end!)
        }
        // The parts ran at the same time.
        #expect(parts.map(\.start).max()! < parts.map(\.end!).min()!)
    }
}
#endif
