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

@Suite(.serialized, .processWide)
struct StrobeTracingTests {
    static func path(_ name: String = #function) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        return NSTemporaryDirectory()
            + "strobe-tracing-\(getpid())-\(safe)-\(UInt32.random(in: 0...UInt32.max)).pftrace"
    }

    static func record(_ path: String, _ body: () async throws -> Void) async throws -> ParsedTrace {
        _ = bootstrapped
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        try await TraceSession.record(configuration) { try await body() }
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

    @Test func aSpanStartsCleanAfterARecordIsReusedAndDropsChangesAfterItsEnd() async throws {
        let path = Self.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = try await Self.record(path) {
            let tracer = InstrumentationSystem.tracer
            // Spans of one thread, one after another, reuse the records of
            // ended ones: each changed one is followed by a plain one.
            for round in 0..<8 {
                let earlier = tracer.startSpan("earlier \(round)")
                earlier.end()
                let changed = tracer.startSpan("changed \(round)")
                changed.attributes["round"] = round
                changed.attributes["http.method"] = "GET"
                changed.setStatus(SpanStatus(code: .error, message: "down"))
                changed.recordError(PhotoError.unavailable(shard: round))
                changed.addLink(SpanLink(context: earlier.context, attributes: [:]))
                changed.operationName = "renamed \(round)"
                changed.end()
                // Changes after the end are dropped, in place or whole.
                changed.attributes["late"] = true
                changed.attributes = ["replaced": true]
                #expect(changed.attributes["late"] == nil)
                tracer.withSpan("plain \(round)") { _ in }
                // Spans that change something of their own write all they
                // hold: nothing of an earlier span's.
                for index in 0..<3 {
                    tracer.withSpan("next \(round).\(index)") { span in span.attributes["own"] = index }
                }
            }
        }
        #expect(trace.loss.unmatchedEnds == 0)
        for round in 0..<8 {
            let renamed = try #require(trace.intervals(named: "renamed \(round)").first)
            #expect(renamed.arguments["round"] == .int(Int64(round)))
            #expect(renamed.arguments["http.method"] == .string("GET"))
            #expect(renamed.arguments["status"] == .string("error"))
            #expect(renamed.arguments["error.count"] == .int(1))
            #expect(renamed.arguments["link.0.span_id"] != nil)
            #expect(renamed.arguments["late"] == nil)
            #expect(renamed.arguments["replaced"] == nil)
            let plain = try #require(trace.intervals(named: "plain \(round)").first)
            let earlier = try #require(trace.intervals(named: "earlier \(round)").first)
            var clean = [plain, earlier]
            for index in 0..<3 {
                let next = try #require(trace.intervals(named: "next \(round).\(index)").first)
                #expect(next.arguments["own"] == .int(Int64(index)))
                clean.append(next)
            }
            for interval in clean {
                for key in [
                    "round", "http.method", "status", "status.message", "error.count", "error.type", "link.0.span_id",
                    "late", "replaced",
                ] {
                    #expect(interval.arguments[key] == nil, "\(interval.name) carries \(key)")
                }
            }
        }
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
            let future = DefaultTracerClock.Instant(
                nanosecondsSinceEpoch: DefaultTracerClock.now.nanosecondsSinceEpoch + 10_000_000_000)
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
}
#endif
