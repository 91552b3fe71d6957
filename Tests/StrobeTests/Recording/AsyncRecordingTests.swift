import Foundation
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeEncoding

/// Async intervals: across threads, with late names and past starts. Every
/// test starts a session, so the suite runs its tests one at a time.
@Suite(.serialized, .processWide)
struct AsyncRecordingTests {
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func asyncIntervalsEndOnAnotherThreadAsOneSlice() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(RecordingTests.configuration(path))
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
        let (file, _) = try RecordingTests.recordStreamedOrDumped(ring: ring, path: path, dumpPath: dumpPath) {
            // This thread records first, so it is drained first: it ends what a
            // later thread begins.
            Trace.instant("ender")
            nonisolated(unsafe) var intervals: [(Trace.AsyncInterval, Trace.AsyncInterval)] = []
            runOnNewThread {
                for _ in 0..<20 {
                    let parent = Trace.beginAsync(Trace.Name("parent"), parent: nil, flow: Trace.Flow(id: 99))
                    let child = Trace.beginAsync(
                        Trace.Name("child"), parent: parent,
                        arguments: [Trace.Argument(Trace.Name("begin key"), .int(1))])
                    intervals.append((parent, child))
                }
            }
            for (index, (parent, child)) in intervals.enumerated() {
                child.end(arguments: [
                    Trace.Argument(Trace.Name("index"), .int(Int64(index))),
                    Trace.Argument(Trace.Name("ok"), .bool(true)),
                ])
                parent.end(arguments: ["label": "done", "ratio": 0.5])
            }
        }

        let trace = try OfficialDecoder.decode(file)
        #expect(trace.errors.isEmpty)
        let parents = trace.slices(named: "parent")
        let children = trace.slices(named: "child")
        #expect(parents.count == 20 && children.count == 20)
        #expect(
            parents.allSatisfy {
                $0.dur != nil && $0.args["label"] == .string("done") && $0.args["ratio"] == .double(0.5)
            })
        #expect(parents.allSatisfy { $0.flow_ids == [99] })
        #expect(parents.allSatisfy { trace.track($0.track)?.parent != nil && trace.track($0.track)?.pid != nil })
        let parentTracks = Set(parents.map(\.track))
        for child in children {
            #expect(child.dur != nil)
            #expect(child.args["begin key"] == .int(1))
            #expect(child.args["ok"] == .bool(true))
            #expect(trace.track(child.track).map { parentTracks.contains($0.parent ?? 0) } == true)
        }
        #expect(
            Set(children.compactMap { if case .int(let index) = $0.args["index"] { index } else { nil } }).count == 20)
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
        let (file, unended) = try RecordingTests.recordStreamedOrDumped(ring: ring, path: path, dumpPath: dumpPath) {
            // This thread records first, so it is drained first: it ends what a
            // later thread begins.
            Trace.instant("ender")
            nonisolated(unsafe) var intervals:
                [(parent: Trace.AsyncInterval, step: Trace.AsyncInterval, plain: Trace.AsyncInterval)] = []
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
                        renamedTo: Trace.Name("request \(index)"),
                        arguments: [Trace.Argument(Trace.Name("ok"), .bool(true))])
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
        _ = try RecordingTests.record(RecordingTests.configuration(path)) {
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
        let names = Set(
            early.compactMap { interval -> String? in
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
            #expect(
                waiting.allSatisfy {
                    if case .string(let name)? = $0.args["name"] { name.hasPrefix("done ") } else { false }
                })
        }
    }

    /// Async intervals reported after the fact begin and end at the times
    /// they name; an end is never placed before its begin.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func asyncIntervalsMayBeginAndEndInThePast() throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try RecordingTests.record(RecordingTests.configuration(path)) {
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
}
