import CStrobe
import Foundation
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe

/// Every test here starts a session, and sessions are process-wide, so the
/// suite runs its tests one at a time.
@Suite(.serialized, .processWide)
struct RecordingTests {
    /// A configuration that writes to `path` and samples nothing extra.
    static func configuration(_ path: String) -> TraceConfiguration {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        return configuration
    }

    /// Runs `body` in a session that streams to `path`, or with `ring` keeps
    /// a flight recorder that it dumps to `dumpPath` before stopping; returns
    /// the file to read and what `body` returned.
    static func recordStreamedOrDumped<Result>(
        ring: Bool, path: String, dumpPath: String, _ body: () throws -> Result
    ) throws -> (file: String, result: Result) {
        var configuration = Self.configuration(path)
        if ring { configuration.whenBufferFull = .overwriteOldest }
        let session = try TraceSession.start(configuration)
        let result = try body()
        if ring { try session.dump(to: dumpPath) }
        try session.stop()
        return (ring ? dumpPath : path, result)
    }

    static func record(
        _ configuration: TraceConfiguration, _ body: () throws -> Void
    ) throws -> TraceSession.Statistics {
        let session = try TraceSession.start(configuration)
        try body()
        try session.stop()
        return session.statistics
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func nestedIntervalsKeepTheirDepthAndThread() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.record(Self.configuration(path)) {
            Trace.setThreadName("nesting test")
            Trace.interval("outer") {
                Trace.interval("middle") {
                    Trace.begin("inner")
                    Trace.end()
                }
                Trace.interval(Trace.Name("dynamic \(3)")) {}
            }
        }
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let byName = Dictionary(trace.slices.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byName["outer"]?.depth == 0)
        #expect(byName["middle"]?.depth == 1)
        #expect(byName["inner"]?.depth == 2)
        #expect(byName["dynamic 3"]?.depth == 1)
        let outer = try #require(byName["outer"])
        let inner = try #require(byName["inner"])
        #expect(inner.ts >= outer.ts)
        #expect(inner.ts + (inner.dur ?? 0) <= outer.ts + (outer.dur ?? 0))
        let track = try #require(trace.track(outer.track))
        #expect(track.kind == "thread")
        #expect(track.name == "nesting test")
        #expect(track.tid != nil && track.pid == Int(getpid()))
        #expect(Set(trace.slices.map(\.track)).count == 1)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func threadsRecordOnTheirOwnTracks() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let threadCount = 4
        let perThread = 1000
        _ = try Self.record(Self.configuration(path)) {
            let group = DispatchGroup()
            for index in 0..<threadCount {
                group.enter()
                let thread = Thread {
                    Trace.setThreadName("worker \(index)")
                    for _ in 0..<perThread {
                        Trace.interval("work") { Trace.counter("progress", 1) }
                    }
                    group.leave()
                }
                thread.start()
            }
            group.wait()
        }
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let work = trace.slices(named: "work")
        #expect(work.count == threadCount * perThread)
        let tracks = Set(work.map(\.track))
        #expect(tracks.count == threadCount)
        let names = Set(tracks.compactMap { trace.track($0)?.name })
        #expect(names == Set((0..<threadCount).map { "worker \($0)" }))
        let tids = Set(tracks.compactMap { trace.track($0)?.tid })
        #expect(tids.count == threadCount)
        #expect(work.allSatisfy { $0.depth == 0 && $0.dur != nil })
    }

    /// Threads that exit are written out and dropped; threads started after
    /// them get tracks of their own even when their recorder reuses a dropped
    /// one's memory.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func threadsStartedAfterOthersExitedKeepTheirOwnTracks() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = Self.configuration(path)
        configuration.flushInterval = .milliseconds(5)
        let threadCount = 8
        let session = try TraceSession.start(configuration)
        let writer = try #require(SessionWriter.running(generation: cstrobe_load_generation()))
        let held = writer.threadsHeld
        for index in 0..<threadCount {
            let thread = Thread {
                Trace.setThreadName("worker \(index)")
                Trace.interval(Trace.Name("work \(index)")) {}
            }
            thread.start()
            while !thread.isFinished { usleep(1000) }
            // Wait for the writer to drain the exited thread and drop it, so
            // the next thread's recorder can reuse its memory.
            let deadline = ContinuousClock.now + .seconds(10)
            while writer.threadsHeld > held, ContinuousClock.now < deadline { usleep(1000) }
            try #require(writer.threadsHeld == held, "worker \(index) was not dropped within 10 s")
        }
        try session.stop()

        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        var tids: Set<Int> = []
        for index in 0..<threadCount {
            let work = try #require(trace.slices(named: "work \(index)").first)
            let track = trace.track(work.track)
            #expect(track?.name == "worker \(index)")
            if let tid = track?.tid { tids.insert(tid) }
        }
        #expect(tids.count == threadCount)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func countersLandOnNamedTracksWithUnits() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.record(Self.configuration(path)) {
            for value in 0..<10 { Trace.counter("queue depth", value) }
            Trace.counter("load", 0.25)
            Trace.counter("memory", Int64(4096), unit: .bytes)
        }
        let trace = try OfficialDecoder.decode(path)
        let queue = trace.counters.filter { $0.name == "queue depth" }
        #expect(queue.map(\.value) == (0..<10).map(Double.init))
        #expect(trace.counters.first { $0.name == "load" }?.value == 0.25)
        let memory = try #require(trace.counters.first { $0.name == "memory" })
        #expect(memory.value == 4096)
        #expect(trace.track(memory.track)?.counter_unit == "bytes")
        #expect(trace.track(queue[0].track)?.counter_unit == "count")
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func flowsLinkCauseToEffect() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.record(Self.configuration(path)) {
            let flow = Trace.Flow()
            Trace.begin("submit", flow: flow)
            Trace.end()
            let worker = Thread {
                Trace.begin("execute", terminatingFlow: flow)
                Trace.end()
            }
            worker.start()
            while !worker.isFinished { usleep(1000) }
        }
        let trace = try OfficialDecoder.decode(path)
        let submit = try #require(trace.slices(named: "submit").first)
        let execute = try #require(trace.slices(named: "execute").first)
        #expect(submit.flow_ids.count == 1)
        #expect(execute.terminating_flow_ids == submit.flow_ids)
        #expect(submit.track != execute.track)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func resourceUsageShowsAsThreadTimeAndArguments() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.record(Self.configuration(path)) {
            Trace.interval("spin", capturing: .resourceUsage) {
                // Spin for 30 ms of this thread's CPU time, however long
                // a loaded machine makes that in wall time.
                burnThreadCPU(milliseconds: 30)
            }
            Trace.interval("sleep", capturing: .resourceUsage) { usleep(30_000) }
        }
        let trace = try OfficialDecoder.decode(path)
        let spin = try #require(trace.slices(named: "spin").first)
        let sleep = try #require(trace.slices(named: "sleep").first)
        let spinCPU = try #require(spin.thread_dur)
        let sleepCPU = try #require(sleep.thread_dur)
        // Busy: the 30 ms of CPU it spun for (rusage counts in
        // microseconds). Blocked: almost none of its wall time.
        #expect(spinCPU >= 29_000_000, "spin: \(spinCPU) ns on CPU")
        #expect(Double(sleepCPU) < 0.3 * Double(sleep.dur ?? 1))
    }

    /// Sleeps until the background writer has appended to the file (at most
    /// two seconds).
    static func waitForWrite(_ session: TraceSession) {
        let before = session.statistics.bytesWritten
        for _ in 0..<1000 {
            usleep(2000)
            if session.statistics.bytesWritten != before { return }
        }
    }
}
