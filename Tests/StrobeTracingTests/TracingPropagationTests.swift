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

/// Trace context carried across process boundaries.
@Suite(.serialized, .processWide)
struct TracingPropagationTests {
    @Test func injectAndExtractCarryTheTraceAcrossAProcessBoundary() async throws {
        let path = StrobeTracingTests.path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tracer = StrobeTracer()
        nonisolated(unsafe) var headers: [String: String] = [:]
        let trace = try await StrobeTracingTests.record(path) {
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
        let traceID = try #require(StrobeTracingTests.string(client, "trace_id"))
        let spanID = try #require(StrobeTracingTests.string(client, "span_id"))
        #expect(header == "00-\(traceID)-\(spanID)-01")
        #expect(server.arguments["trace_id"] == client.arguments["trace_id"])
        #expect(server.arguments["parent_span_id"] == client.arguments["span_id"])
        #expect(StrobeTracingTests.string(server, "span.kind") == "server")
        // A remote parent has no track here: the server span is a root,
        // linked to its caller by a flow named by the client span's id.
        #expect(trace.tracks[server.track]?.parent == trace.tracks[client.track]?.parent)
        let clientID = try #require(StrobeTracingTests.string(client, "span_id").flatMap { UInt64($0, radix: 16) })
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
        #expect(
            StrobeSpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.traceFlags == 0)
        // A later version may append fields.
        #expect(StrobeSpanContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra") != nil)
        for invalid in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // uppercase
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // zero span id
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // forbidden version
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", // version 00 is four fields
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", // misplaced dash
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
}
#endif
