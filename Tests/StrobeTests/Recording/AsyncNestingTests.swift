import Foundation
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe

/// Async intervals nest under the innermost async interval of their task,
/// across `await`s, thread hops and child tasks, as Perfetto's official
/// schema reads the file.
@Suite(.serialized, .processWide)
struct AsyncNestingTests {
    static func record(_ path: String, _ body: () async throws -> Void) async throws -> OfficialDecoder.Decoded {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        try await TraceSession.record(configuration) { try await body() }
        return try OfficialDecoder.decode(path)
    }

    /// Hops to another thread of the global executor and back.
    @concurrent static func hop() async {
        await Task.yield()
        try? await Task.sleep(nanoseconds: 200_000)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func nestedIntervalsAcrossAwaitsFormATreeAndSyncIntervalsStayOnTheirThread() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = try await Self.record(path) {
            try await Trace.interval("request") {
                await Self.hop()
                try await Trace.interval("load") {
                    await Self.hop()
                    Trace.begin("parse")
                    usleep(100)
                    Trace.end()
                    let step = Trace.beginAsync("step")
                    await Self.hop()
                    step.end()
                    try await Task.sleep(nanoseconds: 100_000)
                }
                await Trace.interval("render") { await Self.hop() }
            }
            // A sibling root after the tree is closed.
            await Trace.interval("later") { await Self.hop() }
        }
        #expect(trace.errors.isEmpty)
        let request = try #require(trace.slices(named: "request").first)
        let load = try #require(trace.slices(named: "load").first)
        let step = try #require(trace.slices(named: "step").first)
        let render = try #require(trace.slices(named: "render").first)
        let later = try #require(trace.slices(named: "later").first)
        let parse = try #require(trace.slices(named: "parse").first)
        let processTrack = try #require(trace.track(request.track)?.parent)
        #expect(trace.track(request.track)?.kind == "async")
        #expect(trace.track(load.track)?.parent == request.track)
        #expect(trace.track(render.track)?.parent == request.track)
        #expect(trace.track(step.track)?.parent == load.track)
        #expect(trace.track(later.track)?.parent == processTrack)
        // The sync interval is on its thread's track, not an async one.
        #expect(trace.track(parse.track)?.kind == "thread")
        for slice in [request, load, step, render, later] { #expect(slice.dur != nil) }
        #expect(load.ts >= request.ts && load.ts + load.dur! <= request.ts + request.dur!)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func childTasksNestUnderTheIntervalThatStartedThem() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = try await Self.record(path) {
            await Trace.interval("fan out") {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            await Trace.interval("part") {
                                await Self.hop()
                                await Trace.interval("part step") { await Self.hop() }
                            }
                        }
                    }
                }
                async let left: Void = Trace.interval("left") { await Self.hop() }
                async let right: Void = Trace.interval("right") { await Self.hop() }
                _ = await (left, right)
                await Task { await Trace.interval("inherited") { await Self.hop() } }.value
                await Task.detached { await Trace.interval("detached") { await Self.hop() } }.value
            }
        }
        #expect(trace.errors.isEmpty)
        let fanOut = try #require(trace.slices(named: "fan out").first)
        let processTrack = try #require(trace.track(fanOut.track)?.parent)
        let parts = trace.slices(named: "part")
        #expect(parts.count == 4)
        let partTracks = Set(parts.map(\.track))
        for part in parts { #expect(trace.track(part.track)?.parent == fanOut.track) }
        let steps = trace.slices(named: "part step")
        #expect(steps.count == 4)
        for step in steps { #expect(partTracks.contains(trace.track(step.track)?.parent ?? 0)) }
        for name in ["left", "right", "inherited"] {
            let slice = try #require(trace.slices(named: name).first, "\(name)")
            #expect(trace.track(slice.track)?.parent == fanOut.track, "\(name)")
        }
        // A detached task inherits nothing: a root of its own.
        let detached = try #require(trace.slices(named: "detached").first)
        #expect(trace.track(detached.track)?.parent == processTrack)
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func explicitParentsWinAndNilMeansARoot() async throws {
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = try await Self.record(path) {
            let other = Trace.beginAsync("other")
            await Trace.interval("scope") {
                await Task.yield()
                Trace.beginAsync(Trace.Name("explicit"), parent: other).end()
                Trace.beginAsync(Trace.Name("root"), parent: nil).end()
                Trace.beginAsync("implicit", arguments: ["k": 1]).end()
            }
            other.end()
        }
        let other = try #require(trace.slices(named: "other").first)
        let scope = try #require(trace.slices(named: "scope").first)
        let processTrack = trace.track(other.track)?.parent
        #expect(trace.track(scope.track)?.parent == processTrack)
        #expect(trace.track(try #require(trace.slices(named: "explicit").first).track)?.parent == other.track)
        #expect(trace.track(try #require(trace.slices(named: "root").first).track)?.parent == processTrack)
        let implicit = try #require(trace.slices(named: "implicit").first)
        #expect(trace.track(implicit.track)?.parent == scope.track)
        #expect(implicit.args["k"] == .int(1))
    }

    @Test func withoutASessionTheIntervalOnlyRunsItsBody() async throws {
        func body() async -> UInt64 { AsyncIntervalContext.current }
        func failing() async throws(CancellationError) -> UInt64 { throw CancellationError() }
        #expect(await Trace.interval("idle", body) == 0)
        do {
            _ = try await Trace.interval("idle", failing)
            Issue.record("the error was not rethrown")
        } catch {}
    }
}
