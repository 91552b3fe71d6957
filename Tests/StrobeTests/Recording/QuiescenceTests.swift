import CStrobe
import Foundation
import Strobe
import StrobeEncoding
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// A stopping session waits for the writes in flight, exactly.
@Suite(.serialized, .processWide)
struct QuiescenceTests {
    /// A thread that checked the session and is preempted before it
    /// publishes its record, for far longer than any fixed wait, still gets
    /// its record into the file; the stop returns only after it published.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func stopWaitsForAWriteInFlight() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        let entered = DispatchSemaphore(value: 0)
        let published = Published()
        let writer = Thread {
            Trace.begin("warm")
            Trace.end()
            let generation = cstrobe_load_generation()
            let cursor = cstrobe_get_cursor()!
            // What an inlined `Trace` call does, with a long pause in the
            // middle, between its check and its publication.
            guard cstrobe_enter_write(cursor, generation) else {
                entered.signal()
                return
            }
            entered.signal()
            usleep(200_000)
            let position = cursor.pointee.published!
            let timestamp = cstrobe_raw_timestamp() &- cursor.pointee.timestamp_base
            position[0] = RecordLayout.header(kind: RecordLayout.instant, timestamp: timestamp)
            position[1] = Trace.Name("late").word
            cstrobe_count_event(cursor, CSTROBE_EVENT_RECORDED)
            published.mark()
            cstrobe_publish_and_leave(cursor, position + 2)
        }
        writer.start()
        entered.wait()
        try session.stop()
        #expect(published.isMarked, "the stop returned before the write in flight was published")
        #expect(session.statistics.recordedEvents == 3)
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        #expect(trace.instants.map(\.name) == ["late"])
    }

    /// Threads record flat out while sessions start and stop; every event a
    /// session counts as recorded is in its file.
    @Test func everyRecordedEventReachesTheFileWhenAStopMeetsBusyThreads() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let stop = Published()
        let exited = DispatchGroup()
        let threads = (0..<3).map { _ in
            Thread {
                while !stop.isMarked {
                    Trace.counter("busy", 1)
                    Trace.instant("busy instant")
                }
                exited.leave()
            }
        }
        for thread in threads {
            exited.enter()
            thread.start()
        }
        // The threads have left their loop before the test ends: one still
        // inside it would record into the next test's session (the stress
        // test counted a 65th thread's counter and instant).
        defer {
            stop.mark()
            exited.wait()
        }
        var busyInFiles = 0
        for _ in 0..<8 {
            let session = try TraceSession.start(configuration)
            usleep(5_000)
            try session.stop()
            let statistics = session.statistics
            let trace = try TraceReader.read(contentsOf: path)
            #expect(trace.isComplete)
            // Count only this test's events: threads of other tests may
            // record into the session too, and are counted as recorded.
            let busy =
                trace.counters.filter { $0.name == "busy" }.reduce(0) { $0 + $1.samples.count }
                + trace.instants.filter { $0.name == "busy instant" }.count
            let others =
                trace.counters.filter { $0.name != "busy" }.reduce(0) { $0 + $1.samples.count }
                + trace.instants.filter { $0.name != "busy instant" }.count + trace.intervals.count * 2
            #expect(statistics.discardedEvents == 0)
            busyInFiles += busy
            #expect(
                UInt64(busy + others) >= statistics.recordedEvents
                    - UInt64(trace.intervals.filter { $0.duration == nil }.count))
            #expect(UInt64(busy + others) <= statistics.recordedEvents, "every recorded event is in the file, no other")
        }
        #expect(busyInFiles > 0)
    }
}

/// A flag set once by one thread and read by others.
final class Published: @unchecked Sendable {
    private let lock = NSLock()
    private var marked = false
    func mark() { lock.withLock { marked = true } }
    var isMarked: Bool { lock.withLock { marked } }
}
