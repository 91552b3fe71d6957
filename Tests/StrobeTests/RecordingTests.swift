import Foundation
import StrobeReader
import StrobeTestSupport
import Testing

@testable import Strobe

/// Every test here starts a session, and sessions are process-wide, so the
/// suite runs its tests one at a time.
@Suite(.serialized)
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
        for index in 0..<threadCount {
            let thread = Thread {
                Trace.setThreadName("worker \(index)")
                Trace.interval(Trace.Name("work \(index)")) {}
            }
            thread.start()
            while !thread.isFinished { usleep(1000) }
            // Let the writer drain the exited thread and drop it.
            usleep(40_000)
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
    func asyncIntervalsEndOnAnotherThreadAsOneSlice() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(Self.configuration(path))
        let interval = Trace.beginAsync("download", arguments: ["bytes": 512])
        let ended = Thread {
            interval.end()
        }
        ended.start()
        while !ended.isFinished { usleep(1000) }
        let value = await Trace.interval("await work") {
            await Task.yield()
            return 7
        }
        #expect(value == 7)
        try session.stop()

        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let download = try #require(trace.slices(named: "download").first)
        #expect(download.dur != nil)
        #expect(trace.track(download.track)?.kind == "async")
        #expect(trace.track(download.track)?.name == "download")
        let awaited = try #require(trace.slices(named: "await work").first)
        #expect(awaited.dur != nil)
        #expect(trace.track(awaited.track)?.kind == "async")
    }

    /// Async intervals that end on a thread drained before the one they
    /// began on, nested ones and arguments on ends, in a streamed file and in
    /// a flight-recorder dump.
    @Test(.enabled(if: OfficialDecoder.isUsable), arguments: [false, true])
    func asyncEndsWithArgumentsNestAndMayComeBeforeTheirBegins(ring: Bool) throws {
        let path = temporaryTracePath()
        let dumpPath = temporaryTracePath("dump")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: dumpPath)
        }
        let (file, _) = try Self.recordStreamedOrDumped(ring: ring, path: path, dumpPath: dumpPath) {
            // This thread records first, so it is drained first: it ends what a
            // later thread begins.
            Trace.instant("ender")
            nonisolated(unsafe) var intervals: [(Trace.AsyncInterval, Trace.AsyncInterval)] = []
            runOnNewThread {
                for _ in 0..<20 {
                    let parent = Trace.beginAsync(Trace.Name("parent"), parent: nil, flow: Trace.Flow(id: 99))
                    let child = Trace.beginAsync(
                        Trace.Name("child"), parent: parent, arguments: [Trace.Argument(Trace.Name("begin key"), .int(1))])
                    intervals.append((parent, child))
                }
            }
            for (index, (parent, child)) in intervals.enumerated() {
                child.end(arguments: [Trace.Argument(Trace.Name("index"), .int(Int64(index))), Trace.Argument(Trace.Name("ok"), .bool(true))])
                parent.end(arguments: ["label": "done", "ratio": 0.5])
            }
        }

        let trace = try OfficialDecoder.decode(file)
        #expect(trace.errors.isEmpty)
        let parents = trace.slices(named: "parent")
        let children = trace.slices(named: "child")
        #expect(parents.count == 20 && children.count == 20)
        #expect(parents.allSatisfy { $0.dur != nil && $0.args["label"] == .string("done") && $0.args["ratio"] == .double(0.5) })
        #expect(parents.allSatisfy { $0.flow_ids == [99] })
        #expect(parents.allSatisfy { trace.track($0.track)?.parent != nil && trace.track($0.track)?.pid != nil })
        let parentTracks = Set(parents.map(\.track))
        for child in children {
            #expect(child.dur != nil)
            #expect(child.args["begin key"] == .int(1))
            #expect(child.args["ok"] == .bool(true))
            #expect(trace.track(child.track).map { parentTracks.contains($0.parent ?? 0) } == true)
        }
        #expect(Set(children.compactMap { if case .int(let index) = $0.args["index"] { index } else { nil } }).count == 20)
    }

    /// Renamable async intervals are written under the name their end gives,
    /// with the time they began, nested, in either drain order, in a
    /// streamed file and in a flight-recorder dump; one never ended is
    /// written under its first name without an end.
    @Test(.enabled(if: OfficialDecoder.isUsable), arguments: [false, true])
    func renamableAsyncIntervalsTakeTheNameTheirEndGives(ring: Bool) throws {
        let path = temporaryTracePath()
        let dumpPath = temporaryTracePath("dump")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: dumpPath)
        }
        let count = 20
        let (file, unended) = try Self.recordStreamedOrDumped(ring: ring, path: path, dumpPath: dumpPath) {
            // This thread records first, so it is drained first: it ends what a
            // later thread begins.
            Trace.instant("ender")
            nonisolated(unsafe) var intervals: [(parent: Trace.AsyncInterval, step: Trace.AsyncInterval, plain: Trace.AsyncInterval)] = []
            runOnNewThread {
                for index in 0..<count {
                    let parent = Trace.beginAsync(
                        Trace.Name("request"), parent: nil,
                        arguments: [Trace.Argument(Trace.Name("index"), .int(Int64(index)))], renamable: true)
                    let step = Trace.beginAsync(Trace.Name("step"), parent: parent, renamable: true)
                    let plain = Trace.beginAsync(Trace.Name("plain"), parent: parent)
                    intervals.append((parent, step, plain))
                }
            }
            #expect(intervals.allSatisfy { $0.parent.isRenamable && $0.step.isRenamable && !$0.plain.isRenamable })
            for (index, interval) in intervals.enumerated() {
                interval.step.end(renamedTo: Trace.Name("step \(index)"))
                interval.plain.end(renamedTo: Trace.Name("plain renamed"))
                if index % 2 == 0 {
                    interval.parent.end(
                        renamedTo: Trace.Name("request \(index)"), arguments: [Trace.Argument(Trace.Name("ok"), .bool(true))])
                } else {
                    interval.parent.end()
                }
            }
            // Begun and renamed on one thread, after the others.
            let local = Trace.beginAsync(Trace.Name("local"), parent: nil, renamable: true)
            local.end(renamedTo: Trace.Name("local renamed"))
            return Trace.beginAsync(Trace.Name("unended"), parent: nil, renamable: true)
        }
        unended.end(renamedTo: Trace.Name("too late"))

        let trace = try OfficialDecoder.decode(file)
        #expect(trace.errors.isEmpty)
        #expect(trace.slices(named: "request").count == count / 2)
        #expect(trace.slices(named: "step").isEmpty)
        for index in 0..<count {
            let name = index % 2 == 0 ? "request \(index)" : nil
            let parent = try #require(
                trace.slices.first { ($0.name == (name ?? "request")) && $0.args["index"] == .int(Int64(index)) })
            #expect(parent.dur != nil)
            #expect(trace.track(parent.track)?.name == parent.name)
            #expect(trace.track(parent.track)?.pid != nil)
            if index % 2 == 0 { #expect(parent.args["ok"] == .bool(true)) }
            let step = try #require(trace.slices(named: "step \(index)").first)
            #expect(trace.track(step.track)?.name == "step \(index)")
            #expect(trace.track(step.track)?.parent == parent.track)
            #expect(step.ts >= parent.ts && step.dur != nil)
            #expect(step.ts + step.dur! <= parent.ts + parent.dur!)
        }
        // An interval begun without `renamable` keeps its first name.
        let plains = trace.slices(named: "plain")
        #expect(plains.count == count)
        #expect(plains.allSatisfy { $0.args["name"] == .string("plain renamed") && $0.dur != nil })
        #expect(trace.slices(named: "local renamed").first?.dur != nil)
        let open = try #require(trace.slices(named: "unended").first)
        #expect(open.dur == nil)
        #expect(trace.slices(named: "too late").isEmpty)

        // Strobe's own reader agrees.
        let read = try TraceReader.read(contentsOf: file)
        #expect(read.intervals(named: "step").isEmpty)
        #expect((0..<count).allSatisfy { read.intervals(named: "step \($0)").first?.duration != nil })
        #expect(read.intervals(named: "unended").first.map { $0.duration == nil } == true)
        #expect(read.loss.unmatchedEnds == 0)
    }

    /// Renamable intervals held past the limit are written early, oldest
    /// first, under their first name; their final name is then the argument
    /// `name`, and nothing is lost.
    @Test func renamableIntervalsHeldPastTheLimitAreWrittenEarly() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let count = 20_000
        let limit = SharedTracks.heldBeginLimit
        _ = try Self.record(Self.configuration(path)) {
            let intervals = (0..<count).map { _ in
                Trace.beginAsync(Trace.Name("waiting"), parent: nil, renamable: true)
            }
            for (index, interval) in intervals.enumerated() {
                interval.end(renamedTo: Trace.Name("done \(index % 10)"))
            }
        }
        let trace = try TraceReader.read(contentsOf: path)
        let early = trace.intervals(named: "waiting")
        // The limit is crossed once, at limit + 1 held, and a quarter goes.
        #expect(early.count == limit / 4)
        #expect(early.allSatisfy { $0.duration != nil })
        let names = Set(early.compactMap { interval -> String? in
            if case .string(let name)? = interval.arguments["name"] { name } else { nil }
        })
        #expect(names == Set((0..<10).map { "done \($0)" }))
        let renamed = (0..<10).reduce(0) { $0 + trace.intervals(named: "done \($1)").count }
        #expect(renamed == count - limit / 4)
        #expect(trace.loss.unmatchedEnds == 0)
        if OfficialDecoder.isUsable {
            let decoded = try OfficialDecoder.decode(path)
            #expect(decoded.errors.isEmpty)
            let waiting = decoded.slices(named: "waiting")
            #expect(waiting.count == limit / 4)
            #expect(waiting.allSatisfy { if case .string(let name)? = $0.args["name"] { name.hasPrefix("done ") } else { false } })
        }
    }

    /// Async intervals reported after the fact begin and end at the times
    /// they name; an end is never placed before its begin.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func asyncIntervalsMayBeginAndEndInThePast() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.record(Self.configuration(path)) {
            Trace.instant("before")
            usleep(20_000)
            let late = Trace.beginAsync(Trace.Name("late"), parent: nil, startedAgo: .milliseconds(10))
            #expect(late.isRenamable)
            late.end(arguments: [], endedAgo: .milliseconds(5))
            let plain = Trace.beginAsync(Trace.Name("plain"), parent: nil)
            #expect(!plain.isRenamable)
            usleep(10_000)
            plain.end(arguments: [Trace.Argument(Trace.Name("k"), .int(1))], endedAgo: .milliseconds(4))
            let clamped = Trace.beginAsync(Trace.Name("clamped"), parent: nil)
            clamped.end(arguments: [], endedAgo: .seconds(10))
            Trace.instant("after")
        }
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        let before = try #require(trace.instants.first { $0.name == "before" }).ts
        let after = try #require(trace.instants.first { $0.name == "after" }).ts
        let late = try #require(trace.slices(named: "late").first)
        let lateDuration = try #require(late.dur)
        #expect(late.ts > before + 9_000_000 && late.ts < after)
        #expect(lateDuration > 4_000_000 && lateDuration < 6_000_000)
        let plain = try #require(trace.slices(named: "plain").first)
        let plainDuration = try #require(plain.dur)
        #expect(plainDuration >= 6_000_000 && plainDuration < 100_000_000)
        #expect(plain.args["k"] == .int(1))
        #expect(trace.slices(named: "clamped").first?.dur == 0)
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
                let deadline = Date().addingTimeInterval(0.03)
                var x = 0.0
                while Date() < deadline { x += sin(x) }
                #expect(x.isFinite)
            }
            Trace.interval("sleep", capturing: .resourceUsage) { usleep(30_000) }
        }
        let trace = try OfficialDecoder.decode(path)
        let spin = try #require(trace.slices(named: "spin").first)
        let sleep = try #require(trace.slices(named: "sleep").first)
        let spinCPU = try #require(spin.thread_dur)
        let sleepCPU = try #require(sleep.thread_dur)
        // Busy: most of the wall time on CPU. Blocked: almost none.
        #expect(Double(spinCPU) > 0.5 * Double(spin.dur ?? 0))
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

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func discardedEventsAreCountedExactly() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = Self.configuration(path)
        configuration.bufferSizePerThread = 64 << 10
        configuration.flushInterval = .milliseconds(5)
        let threadCount = 4
        let pairsPerThread = 50_000
        let session = try TraceSession.start(configuration)
        do {
            let group = DispatchGroup()
            for _ in 0..<threadCount {
                group.enter()
                Thread {
                    for index in 0..<pairsPerThread {
                        // Pauses let the writer drain, so recording resumes
                        // after each run of discarded events. On a loaded
                        // machine the writer may need longer than one flush
                        // interval, so the pause lasts until it has written.
                        if index % 5000 == 4999 { Self.waitForWrite(session) }
                        Trace.begin("stress")
                        if index % 7 == 0 { Trace.counter("stress counter", index) }
                        Trace.end()
                    }
                    group.leave()
                }.start()
            }
            group.wait()
        }
        try session.stop()
        let statistics = session.statistics
        let emitted = threadCount * pairsPerThread * 2 + threadCount * ((pairsPerThread + 6) / 7)
        let trace = try OfficialDecoder.decode(path)
        let stress = trace.slices(named: "stress")
        let inFile = stress.count * 2 + trace.counters.filter { $0.name == "stress counter" }.count
        let discarded = Int(trace.stat("chunks_discarded"))
        #expect(discarded > 0, "the buffer is small enough that some events must be discarded")
        #expect(inFile + discarded == emitted)
        #expect(Int(statistics.discardedEvents) == discarded)
        // An interval whose begin was kept keeps its end.
        #expect(stress.allSatisfy { $0.dur != nil })
        #expect(trace.errors.isEmpty)
        #expect(trace.stat("tokenizer_skipped_packets") == 0)
        #expect(trace.stat("packets_dropped_marks") > 0)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func ringWrapKeepsEverySurvivingEventVisible() throws {
        let recordingPath = temporaryTracePath()
        let dumpPath = temporaryTracePath("dump")
        defer {
            try? FileManager.default.removeItem(atPath: recordingPath)
            try? FileManager.default.removeItem(atPath: dumpPath)
        }
        var configuration = Self.configuration(recordingPath)
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 64 << 10
        let session = try TraceSession.start(configuration)
        let pairs = 40_000
        Trace.begin("held open")
        for index in 0..<pairs {
            Trace.begin("ring")
            if index == pairs - 1 { Trace.instant("last") }
            Trace.end()
        }
        try session.dump(to: dumpPath)
        Trace.end()
        try session.stop()

        let statistics = session.statistics
        #expect(statistics.overwrittenEvents > 0)
        for path in [dumpPath, recordingPath] {
            let trace = try OfficialDecoder.decode(path)
            #expect(trace.errors.isEmpty, "\(path): \(trace.errors.prefix(3))")
            #expect(trace.stat("tokenizer_skipped_packets") == 0)
            let ring = trace.slices(named: "ring")
            #expect(ring.count > 1000, "a wrapped 64 KiB ring still shows thousands of slices")
            #expect(trace.instants.contains { $0.name == "last" })
            let recorded = Int(trace.stat("chunks_written"))
            let overwritten = Int(trace.stat("chunks_overwritten"))
            #expect(overwritten > 0)
            let inFile = ring.count * 2 + trace.instants.count + trace.slices(named: "held open").count * 2
            // Every event still in the ring is in the file; ends whose begin
            // was overwritten are the only ones left out.
            #expect(inFile <= recorded - overwritten)
            #expect(recorded - overwritten - inFile < 64)
        }
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func unbalancedCallsNeverCorruptTheTrace() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let long = String(repeating: "é", count: 5000)
        let statistics = try Self.record(Self.configuration(path)) {
            Trace.end()
            Trace.end()
            Trace.begin("")
            Trace.end()
            Trace.begin(Trace.Name(long))
            Trace.end()
            Trace.begin("never ended")
            Trace.instant(Trace.Name(""))
        }
        #expect(statistics.unmatchedEnds == 2)
        let trace = try OfficialDecoder.decode(path)
        #expect(trace.errors.isEmpty)
        #expect(trace.slices.contains { $0.name.isEmpty && $0.dur != nil })
        let longSlice = try #require(trace.slices.first { $0.name.hasPrefix("éé") })
        #expect(longSlice.name.utf8.count <= Trace.Name.maximumLength)
        #expect(longSlice.name.utf8.count > Trace.Name.maximumLength - 4)
        let open = try #require(trace.slices(named: "never ended").first)
        #expect(open.dur == nil)
    }

    @Test func sessionsStartAndStopWhileThreadsRecord() throws {
        let running = Atomic2()
        let threads = (0..<3).map { index in
            Thread {
                var count = 0
                while running.isRunning {
                    count += 1
                    if count % 64 == 0 { usleep(50) }
                    Trace.begin("racing")
                    Trace.counter("racing counter", index)
                    Trace.instant("racing instant")
                    Trace.end()
                }
                running.finished()
            }
        }
        threads.forEach { $0.start() }
        var paths: [String] = []
        for round in 0..<8 {
            let path = temporaryTracePath("race\(round)")
            paths.append(path)
            let session = try TraceSession.start(Self.configuration(path))
            usleep(UInt32.random(in: 100...5000))
            try session.stop()
        }
        running.stop()
        while running.finishedCount < threads.count { usleep(1000) }
        defer { paths.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        if OfficialDecoder.isUsable {
            for path in paths {
                let trace = try OfficialDecoder.decode(path)
                #expect(trace.stat("tokenizer_skipped_packets") == 0)
                #expect(!trace.errors.contains("parse_error"))
            }
        }
    }

    @Test func secondSessionIsRefusedWhileOneRuns() throws {
        let session = try TraceSession.start(TraceConfiguration())
        #expect(throws: TraceSessionError.alreadyRecording) {
            _ = try TraceSession.start(TraceConfiguration())
        }
        try session.stop()
    }

    @Test func unwritablePathNamesTheFile() {
        #expect(throws: TraceSessionError.cannotCreateFile(
            path: "/nonexistent-dir/x.pftrace", reason: "No such file or directory")
        ) {
            _ = try TraceSession.start(TraceConfiguration(outputPath: "/nonexistent-dir/x.pftrace"))
        }
    }

    @Test func unsampledSessionRecordsNothing() throws {
        var configuration = TraceConfiguration(outputPath: temporaryTracePath())
        configuration.samplingProbability = 0
        let session = try TraceSession.start(configuration)
        #expect(!session.isSampled)
        #expect(!Trace.isRecording)
        try session.stop()
        #expect(!FileManager.default.fileExists(atPath: configuration.outputPath!))
    }
}

/// A stop flag and a finish count shared with recording threads.
final class Atomic2: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var finishedThreads = 0
    var isRunning: Bool { lock.lock(); defer { lock.unlock() }; return running }
    var finishedCount: Int { lock.lock(); defer { lock.unlock() }; return finishedThreads }
    func stop() { lock.lock(); running = false; lock.unlock() }
    func finished() { lock.lock(); finishedThreads += 1; lock.unlock() }
}
