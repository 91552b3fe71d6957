#if StrobeTracing
import Foundation
import StrobeTestSupport
@testable import Strobe
import StrobeReader
import StrobeTracing
import Synchronization
import Testing
import Tracing
import StrobeTestTraits

/// Unbounded span names, one notion of "current" with Strobe's own
/// intervals, and what Perfetto's official schema reads.
@Suite(.serialized, .processWide)
struct TracingNamesAndSchemaTests {
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func uniqueSpanNamesAndAttributeKeysAreWrittenNotInterned() async throws {
        let path = StrobeTracingTests.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        // Warm what the tracer interns once (its static keys).
        let warmPath = StrobeTracingTests.path("warm")
        defer { try? FileManager.default.removeItem(atPath: warmPath) }
        _ = try await StrobeTracingTests.record(warmPath) { tracer.withSpan("warm") { $0.attributes["k"] = 1 } }
        let interned = NameTable.shared.count
        _ = try await StrobeTracingTests.record(path) {
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
        let path = StrobeTracingTests.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        _ = try await StrobeTracingTests.record(path) {
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
        let path = StrobeTracingTests.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await StrobeTracingTests.record(path) {
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
        let path = StrobeTracingTests.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await StrobeTracingTests.record(path) {
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
#endif
