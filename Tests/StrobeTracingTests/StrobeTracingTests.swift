import Foundation
import StrobeTestSupport
@testable import Strobe
import StrobeReader
import StrobeTracing
import Synchronization
import Testing
import Tracing

/// The tracing system is process-wide and set once: every test goes through
/// this.
private let bootstrapped: Void = InstrumentationSystem.bootstrap(StrobeTracer())

private enum LookupError: Error, CustomStringConvertible {
    case missing(String)
    var description: String {
        switch self {
        case .missing(let key): return "no row for \(key)"
        }
    }
}

/// A header dictionary, as an HTTP library would carry it.
private struct Headers: Injector, Extractor {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

@Suite(.serialized)
struct StrobeTracingTests {
    static func path(_ name: String = #function) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        return NSTemporaryDirectory() + "strobe-tracing-\(getpid())-\(safe)-\(UInt32.random(in: 0...UInt32.max)).pftrace"
    }

    static func record(_ path: String, _ body: () async throws -> Void) async throws -> ParsedTrace {
        _ = bootstrapped
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let session = try TraceSession.start(configuration)
        do {
            try await body()
        } catch {
            try? session.stop()
            throw error
        }
        try session.stop()
        return try TraceReader.read(contentsOf: path)
    }

    static func string(_ interval: Interval, _ key: String) -> String? {
        if case .string(let value)? = interval.arguments[key] { return value }
        return nil
    }

    // MARK: Intervals, nesting and arguments

    @Test func spansNestAndCarryTheirAttributesStatusAndErrors() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = try await Self.record(path) {
            withSpan("GET /photos", ofKind: .server) { span in
                span.attributes["http.method"] = "GET"
                span.attributes["http.status_code"] = 503
                span.attributes["cache.hit_ratio"] = 0.25
                span.attributes["retry"] = true
                span.attributes["tags"] = ["a", "b"]
                withSpan("db.query") { query in
                    query.attributes["db.rows"] = 12
                }
                withSpan("render") { _ in }
                span.recordError(PhotoError.unavailable(shard: 3))
                span.setStatus(SpanStatus(code: .error, message: "shard down"))
            }
        }
        #expect(trace.loss.unmatchedEnds == 0)
        let request = try #require(trace.intervals(named: "GET /photos").first)
        let query = try #require(trace.intervals(named: "db.query").first)
        let render = try #require(trace.intervals(named: "render").first)
        for interval in [request, query, render] {
            #expect(interval.isAsync)
            #expect(interval.duration != nil)
        }
        // Children nest under the parent, in time and in the track tree.
        #expect(trace.tracks[query.track]?.parent == request.track)
        #expect(trace.tracks[render.track]?.parent == request.track)
        #expect(trace.tracks[request.track]?.kind == .async)
        #expect(trace.tracks[request.track]?.parent != nil)
        #expect(trace.tracks[request.track]?.pid == trace.process?.pid)
        #expect(query.start >= request.start && query.end! <= request.end!)
        #expect(render.start >= query.end!)

        // Identity: one trace, children point at the parent.
        let traceID = try #require(Self.string(request, "trace_id"))
        #expect(traceID.count == 32)
        #expect(Self.string(query, "trace_id") == traceID)
        #expect(Self.string(render, "trace_id") == traceID)
        #expect(Self.string(request, "parent_span_id") == nil)
        #expect(Self.string(query, "parent_span_id") == Self.string(request, "span_id"))
        #expect(Self.string(render, "parent_span_id") == Self.string(request, "span_id"))
        #expect(Self.string(query, "span_id") != Self.string(render, "span_id"))
        #expect(Self.string(request, "span.kind") == "server")
        #expect(Self.string(query, "span.kind") == "internal")

        // Attributes, set after the start, arrive with the end.
        #expect(request.arguments["http.method"] == .string("GET"))
        #expect(request.arguments["http.status_code"] == .int(503))
        #expect(request.arguments["cache.hit_ratio"] == .double(0.25))
        #expect(request.arguments["retry"] == .bool(true))
        #expect(request.arguments["tags"] == .string("[a, b]"))
        #expect(query.arguments["db.rows"] == .int(12))
        #expect(render.arguments["db.rows"] == nil)

        // Status and errors.
        #expect(request.arguments["status"] == .string("error"))
        #expect(request.arguments["status.message"] == .string("shard down"))
        #expect(request.arguments["error.count"] == .int(1))
        #expect(Self.string(request, "error.type")?.hasSuffix("PhotoError") == true)
        #expect(request.arguments["error.message"] == .string("unavailable(shard: 3)"))
        let exception = try #require(trace.instants.first { $0.name == "exception" })
        #expect(exception.arguments["span_id"] == request.arguments["span_id"])
        #expect(exception.arguments["error.message"] == .string("unavailable(shard: 3)"))
        #expect(exception.time >= request.start && exception.time <= request.end!)
        #expect(query.arguments["status"] == nil)
    }

    @Test func eventsLinksAndRenamesAreRecorded() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = try await Self.record(path) {
            let earlier = InstrumentationSystem.tracer.startSpan("enqueue")
            earlier.end()
            withSpan("dequeue") { span in
                span.addLink(SpanLink(context: earlier.context, attributes: [:]))
                span.addEvent(SpanEvent(name: "cache miss", attributes: ["key": "photo-7"]))
                span.operationName = "dequeue photo"
            }
        }
        let enqueue = try #require(trace.intervals(named: "enqueue").first)
        // A renamed span is written under its final name, track and all.
        #expect(trace.intervals(named: "dequeue").isEmpty)
        let dequeue = try #require(trace.intervals(named: "dequeue photo").first)
        #expect(trace.tracks[dequeue.track]?.name == "dequeue photo")
        #expect(dequeue.arguments["link.0.span_id"] == enqueue.arguments["span_id"])
        #expect(dequeue.arguments["link.0.trace_id"] == enqueue.arguments["trace_id"])
        #expect(dequeue.arguments["name"] == nil)
        let event = try #require(trace.instants.first { $0.name == "cache miss" })
        #expect(event.arguments["key"] == .string("photo-7"))
        #expect(event.arguments["span_id"] == dequeue.arguments["span_id"])
    }

    @Test func aSpanStillOpenWhenTheSessionStopsIsWrittenWithoutAnEnd() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        nonisolated(unsafe) var open: (any Span)?
        let trace = try await Self.record(path) {
            let span = InstrumentationSystem.tracer.startSpan("long poll", context: .topLevel)
            span.attributes["ignored"] = 1
            span.operationName = "renamed too late"
            open = span
            withSpan("short") { _ in }
        }
        let poll = try #require(trace.intervals(named: "long poll").first)
        #expect(poll.duration == nil)
        #expect(poll.arguments["span.kind"] == .string("internal"))
        #expect(trace.intervals(named: "short").first?.duration != nil)
        #expect(open?.isRecording == true)
        open?.end()
    }

    @Test func spansBeginAndEndAtTheInstantsTheyAreGiven() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        nonisolated(unsafe) var expected: UInt64 = 0
        let trace = try await Self.record(path) {
            Trace.instant("before")
            let started = DefaultTracerClock.now
            usleep(30_000)
            let ended = DefaultTracerClock.now
            expected = ended.nanosecondsSinceEpoch - started.nanosecondsSinceEpoch
            usleep(20_000)
            // Reported after the fact, as a queue or a log replay would.
            let retro = tracer.startSpan("retro", context: .topLevel, at: started)
            retro.end(at: ended)
            // An end before the start is taken as the start.
            let backwards = tracer.startSpan("backwards", context: .topLevel, at: ended)
            backwards.end(at: started)
            // A start in the future is taken as now.
            let future = DefaultTracerClock.Instant(nanosecondsSinceEpoch: DefaultTracerClock.now.nanosecondsSinceEpoch + 10_000_000_000)
            tracer.startSpan("future", context: .topLevel, at: future).end()
            Trace.instant("after")
        }
        let before = try #require(trace.instants.first { $0.name == "before" }).time
        let after = try #require(trace.instants.first { $0.name == "after" }).time
        let retro = try #require(trace.intervals(named: "retro").first)
        let duration = try #require(retro.duration)
        // The wall clock and Strobe's clock agree to well under a millisecond.
        #expect(duration + 1_000_000 > expected && duration < expected + 1_000_000)
        #expect(retro.start + 1_000_000 > before && retro.start < before + 5_000_000)
        #expect(retro.end! + 20_000_000 < after)
        let backwards = try #require(trace.intervals(named: "backwards").first)
        #expect(backwards.duration == 0)
        let future = try #require(trace.intervals(named: "future").first)
        #expect(future.start + 1_000_000 > retro.end! + 20_000_000 && future.start <= after)
        #expect(trace.loss.unmatchedEnds == 0)

        if OfficialDecoder.isUsable {
            let decoded = try OfficialDecoder.decode(path)
            #expect(decoded.errors.isEmpty)
            let official = try #require(decoded.slices(named: "retro").first)
            #expect(official.ts == retro.start && official.dur == retro.duration)
        }
    }

    // MARK: Threads

    @Test func spansEndOnOtherThreadsAndOverlappingSiblingsStayApart() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let count = 40
        nonisolated(unsafe) var beginThreads: [UInt64] = []
        nonisolated(unsafe) var endThreads: [UInt64] = []
        let trace = try await Self.record(path) {
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

    // MARK: Propagation

    @Test func injectAndExtractCarryTheTraceAcrossAProcessBoundary() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        nonisolated(unsafe) var headers: [String: String] = [:]
        let trace = try await Self.record(path) {
            withSpan("client call", ofKind: .client) { span in
                tracer.inject(span.context, into: &headers, using: Headers())
            }
            // The other side of the wire.
            var context = InstrumentationContext.topLevel
            tracer.extract(headers, into: &context, using: Headers())
            let remote = try #require(context.strobeSpanContext)
            #expect(remote.isRemote)
            withSpan("server handler", context: context, ofKind: .server) { span in
                #expect(span.context.strobeSpanContext?.traceID == remote.traceID)
                #expect(span.context.strobeSpanContext?.parentSpanID == remote.spanID)
            }
        }
        let header = try #require(headers["traceparent"])
        #expect(header.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-01/) != nil)
        let client = try #require(trace.intervals(named: "client call").first)
        let server = try #require(trace.intervals(named: "server handler").first)
        #expect(header == "00-\(Self.string(client, "trace_id")!)-\(Self.string(client, "span_id")!)-01")
        #expect(server.arguments["trace_id"] == client.arguments["trace_id"])
        #expect(server.arguments["parent_span_id"] == client.arguments["span_id"])
        #expect(Self.string(server, "span.kind") == "server")
        // A remote parent has no track here: the server span is a root,
        // linked to its caller by a flow named by the client span's id.
        #expect(trace.tracks[server.track]?.parent == trace.tracks[client.track]?.parent)
        let clientID = try #require(Self.string(client, "span_id").flatMap { UInt64($0, radix: 16) })
        #expect(client.flowIDs == [clientID])
        #expect(server.terminatingFlowIDs == [clientID])
        #expect(server.flowIDs.isEmpty && client.terminatingFlowIDs.isEmpty)
    }

    @Test func traceparentParsingFollowsTheW3CFormat() throws {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let context = try #require(StrobeSpanContext(traceparent: valid))
        #expect(context.traceID.description == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanID == 0x00F0_67AA_0BA9_02B7)
        #expect(context.traceFlags == 1)
        #expect(context.isRemote)
        #expect(context.traceparent == valid)
        #expect(StrobeSpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.traceFlags == 0)
        // A later version may append fields.
        #expect(StrobeSpanContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra") != nil)
        for invalid in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // uppercase
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero span id
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // forbidden version
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // version 00 is four fields
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",  // misplaced dash
        ] {
            #expect(StrobeSpanContext(traceparent: invalid) == nil, "\(invalid)")
        }
        #expect(StrobeSpanContext.hex(0xAB) == "00000000000000ab")
    }

    @Test func withoutASessionSpansRecordNothingAndPassTheirParentThrough() throws {
        _ = bootstrapped
        #expect(!Trace.isRecording)
        let tracer = StrobeTracer()
        var context = InstrumentationContext.topLevel
        let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        tracer.extract(["traceparent": incoming], into: &context, using: Headers())
        withSpan("idle", context: context) { span in
            #expect(!span.isRecording)
            span.attributes["ignored"] = 1
            #expect(span.attributes.isEmpty)
            var outgoing: [String: String] = [:]
            tracer.inject(span.context, into: &outgoing, using: Headers())
            #expect(outgoing["traceparent"] == incoming)
        }
        var none: [String: String] = [:]
        withSpan("root") { span in tracer.inject(span.context, into: &none, using: Headers()) }
        #expect(none.isEmpty)
    }

    // MARK: Unbounded names

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func uniqueSpanNamesAndAttributeKeysAreWrittenNotInterned() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        // Warm what the tracer interns once (its static keys).
        let warmPath = Self.path("warm")
        defer { try? FileManager.default.removeItem(atPath: warmPath) }
        _ = try await Self.record(warmPath) { tracer.withSpan("warm") { $0.attributes["k"] = 1 } }
        let interned = NameTable.shared.count
        _ = try await Self.record(path) {
            for index in 0..<200 {
                tracer.withSpan("GET /photos/\(index)", ofKind: .server) { span in
                    span.attributes["photo.\(index)"] = index
                    span.addEvent(SpanEvent(name: "cache miss \(index)", attributes: ["shard.\(index)": "a"]))
                    if index % 2 == 0 { span.operationName = "GET /photos/\(index)/renamed" }
                }
            }
        }
        #expect(NameTable.shared.count == interned)
        let decoded = try OfficialDecoder.decode(path)
        #expect(decoded.errors.isEmpty)
        for index in [0, 1, 198, 199] {
            let name = index % 2 == 0 ? "GET /photos/\(index)/renamed" : "GET /photos/\(index)"
            let slice = try #require(decoded.slices(named: name).first, "\(name)")
            #expect(decoded.track(slice.track)?.name == name)
            #expect(slice.args["photo.\(index)"] == .int(Int64(index)))
            #expect(slice.args["span.kind"] == .string("server"))
            guard case .string(let spanID)? = slice.args["span_id"], case .string(let traceID)? = slice.args["trace_id"]
            else {
                Issue.record("ids missing")
                continue
            }
            #expect(spanID.count == 16 && traceID.count == 32)
            #expect(spanID.allSatisfy { "0123456789abcdef".contains($0) })
            let event = try #require(decoded.instants.first { $0.name == "cache miss \(index)" })
            #expect(event.categories.isEmpty)
        }
    }

    @Test func endedSpansStillReferredToKeepTheirIdentity() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        _ = try await Self.record(path) {
            let kept = tracer.startSpan("kept", context: .topLevel)
            let identity = try #require(kept.spanContext)
            kept.end()
            // Records of ended spans are reused only when nothing refers to them.
            for index in 0..<200 { tracer.withSpan("other \(index)") { $0.attributes["i"] = index } }
            #expect(kept.spanContext == identity)
            #expect(!kept.isRecording)
            kept.attributes["late"] = 1
            #expect(kept.attributes.isEmpty)
            let child = tracer.startSpan("child", context: kept.context)
            #expect(child.spanContext?.parentSpanID == identity.spanID)
            #expect(child.spanContext?.traceID == identity.traceID)
            child.end()
        }
    }

    // MARK: One notion of "current" with Strobe's own intervals

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func spansAndAsyncIntervalsNestUnderEachOther() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await Self.record(path) {
            try await Trace.interval("job") {
                try await withSpan("fetch", ofKind: .client) { _ in
                    try await Task.sleep(nanoseconds: 200_000)
                    await Trace.interval("decode") {
                        await withTaskGroup(of: Void.self) { group in
                            group.addTask { await withSpan("tile") { _ in await Task.yield() } }
                        }
                    }
                    Trace.beginAsync("retry").end()
                }
            }
        }
        let decoded = try OfficialDecoder.decode(path)
        #expect(decoded.errors.isEmpty)
        let job = try #require(decoded.slices(named: "job").first)
        let fetch = try #require(decoded.slices(named: "fetch").first)
        let decode = try #require(decoded.slices(named: "decode").first)
        let tile = try #require(decoded.slices(named: "tile").first)
        let retry = try #require(decoded.slices(named: "retry").first)
        #expect(decoded.track(fetch.track)?.parent == job.track)
        #expect(decoded.track(decode.track)?.parent == fetch.track)
        #expect(decoded.track(tile.track)?.parent == decode.track)
        #expect(decoded.track(retry.track)?.parent == fetch.track)
        // The span tree itself is unchanged: the tile's parent span is the fetch.
        #expect(tile.args["parent_span_id"] == fetch.args["span_id"])
        #expect(tile.args["trace_id"] == fetch.args["trace_id"])
    }

    // MARK: The official schema

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func perfettoSeesTheSameSpansTreeAndArguments() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await Self.record(path) {
            try await withSpan("request", ofKind: .server) { span in
                span.attributes["http.route"] = "/photos/:id"
                try await withSpan("load") { load in
                    try await Task.sleep(nanoseconds: 2_000_000)
                    load.attributes["bytes"] = 2048
                }
                span.setStatus(SpanStatus(code: .ok))
                span.operationName = "GET /photos/:id"
            }
        }
        let decoded = try OfficialDecoder.decode(path)
        #expect(decoded.errors.isEmpty)
        let request = try #require(decoded.slices(named: "GET /photos/:id").first)
        #expect(decoded.slices(named: "request").isEmpty)
        #expect(decoded.track(request.track)?.name == "GET /photos/:id")
        let load = try #require(decoded.slices(named: "load").first)
        #expect(request.dur != nil && load.dur != nil)
        #expect(decoded.track(request.track)?.kind == "async")
        #expect(decoded.track(load.track)?.parent == request.track)
        #expect(decoded.track(request.track)?.pid != nil)
        #expect(decoded.track(load.track)?.pid == decoded.track(request.track)?.pid)
        // End arguments are merged into the slice, as the trace processor does.
        #expect(request.args["http.route"] == .string("/photos/:id"))
        #expect(request.args["status"] == .string("ok"))
        #expect(load.args["bytes"] == .int(2048))
        #expect(load.args["parent_span_id"] == request.args["span_id"])
        #expect(load.args["trace_id"] == request.args["trace_id"])
    }
}

private enum PhotoError: Error {
    case unavailable(shard: Int)
}

extension Thread {
    /// The id of the calling thread.
    static var currentID: UInt64 { UInt64(pthread_self()) }
}

/// How many tasks have started, shared between them.
private final class StartCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .releasing) }
}

/// Hands spans from one thread to another.
private final class SpanQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var spans: [any Span] = []
    private var closed = false
    private var ready = false

    var isReady: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ready
    }

    func put(_ span: any Span) {
        condition.lock()
        spans.append(span)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }

    func take() -> (any Span)? {
        condition.lock()
        defer { condition.unlock() }
        ready = true
        while spans.isEmpty && !closed { condition.wait() }
        return spans.isEmpty ? nil : spans.removeFirst()
    }
}
