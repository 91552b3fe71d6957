import Foundation
import StrobeTestTraits
import Testing

@testable import StrobeReader

/// The OTLP export's spans: ids, parents from nesting, flows as links,
/// instants as events, and the resource from the metadata; then the bytes
/// read back by the pprof tests' small decoder.
@Suite(.processWide)
struct OTLPExportTests {
    /// Thread 7 (track 1): `frame` [100, 200) holding `layout` [110, 150)
    /// and the instant `tap` at 120; `upload` [300, 320), on the flow 9
    /// from `layout`; an instant `late` at 400 that nothing holds; an
    /// unfinished `hang` at 500; the async `request` [600, 700) whose track
    /// holds the track of `query` [620, 650). The metadata names the app.
    static func trace() -> ParsedTrace {
        let intervals: [Interval] = [
            Interval(name: "frame", track: 1, tid: 7, start: 100, duration: 100, depth: 0),
            Interval(name: "layout", track: 1, tid: 7, start: 110, duration: 40, depth: 1, flowIDs: [9]),
            Interval(name: "upload", track: 1, tid: 7, start: 300, duration: 20, depth: 0, terminatingFlowIDs: [9]),
            Interval(name: "hang", track: 1, tid: 7, start: 500, depth: 0),
            Interval(name: "request", track: 10, start: 600, duration: 100, isAsync: true),
            Interval(name: "query", track: 11, start: 620, duration: 30, isAsync: true),
        ]
        let tracks: [UInt64: TraceTrack] = [
            10: TraceTrack(
                uuid: 10, kind: .async, name: "request", parent: nil, tid: nil, pid: 42, counterUnit: nil,
                isThreadTime: false),
            11: TraceTrack(
                uuid: 11, kind: .async, name: "query", parent: 10, tid: nil, pid: 42, counterUnit: nil,
                isThreadTime: false),
        ]
        let instants = [
            Instant(
                name: TraceOrigin.eventName, track: 1, tid: 7, time: 50,
                arguments: [
                    "app.name": .string("Lens"), "app.version": .string("2.1"), "sampling.probability": .double(0.25),
                ]),
            Instant(name: "tap", track: 1, tid: 7, time: 120, arguments: ["x": .int(3)]),
            Instant(name: "late", track: 1, tid: 7, time: 400, arguments: [:]),
        ]
        return ParsedTrace(
            process: TraceProcess(pid: 42, name: "lens"),
            threads: [TraceThread(tid: 7, pid: 42, name: "main", trackUUID: 1)],
            tracks: tracks, intervals: IntervalList(intervals), instants: instants, counters: [], loss: DataLoss(),
            issues: [], truncation: nil, packetCount: 1, decodedPacketCount: 1)
    }

    @Test func spansNestLinkAndHoldEvents() throws {
        let model = OTLPSpans(Self.trace())
        #expect(model.traceID.count == 16)
        let names = model.spans.map(\.name)
        #expect(names == ["frame", "layout", "upload", "hang", "request", "query", "late"])
        let span = Dictionary(uniqueKeysWithValues: model.spans.enumerated().map { ($1.name, $0) })
        #expect(model.spans[span["layout"]!].parentIndex == span["frame"])
        #expect(model.spans[span["frame"]!].parentIndex == nil)
        // An async interval under the one whose track holds its track.
        #expect(model.spans[span["query"]!].parentIndex == span["request"])
        #expect(model.spans[span["request"]!].parentIndex == nil)
        #expect(model.spans[span["upload"]!].links == [span["layout"]!])
        // `tap` in the innermost span holding it; `late` a span of its own.
        #expect(model.spans[span["layout"]!].events == [1])
        #expect(model.spans[span["late"]!].events == [2] && model.spans[span["late"]!].isInstant)
        #expect(model.spans[span["hang"]!].isUnfinished)
        #expect(Set(model.spans.map(\.spanID)).count == model.spans.count)
        // The same trace gives the same ids.
        #expect(OTLPSpans(Self.trace()).spans.map(\.spanID) == model.spans.map(\.spanID))
        #expect(OTLPSpans(Self.trace()).traceID == model.traceID)
    }

    @Test func bytesCarryResourceSpansAndTimes() throws {
        let request = try PprofMessage(OTLPExport.encode(Self.trace(), unixOffset: 1_000))
        let resourceSpans = try #require(request.messages(1).first)
        let resource = try #require(resourceSpans.messages(1).first)
        let attributes = resource.messages(1).map { ($0.strings(1).first ?? "", $0) }
        let keys = attributes.map(\.0)
        #expect(keys.contains("service.name") && keys.contains("service.version"))
        let service = try #require(attributes.first { $0.0 == "service.name" }?.1.messages(2).first)
        #expect(service.strings(1) == ["Lens"])
        #expect(keys.contains("sampling.probability"))
        let scope = try #require(resourceSpans.messages(2).first)
        let spans = scope.messages(2)
        #expect(spans.count == 7)
        let frame = try #require(spans.first { $0.strings(5) == ["frame"] })
        #expect(try frame.number(6) == 1)
        #expect(frame.rawBytes(1).map(\.count) == [16] && frame.rawBytes(2).map(\.count) == [8])
        let layout = try #require(spans.first { $0.strings(5) == ["layout"] })
        #expect(layout.rawBytes(4) == frame.rawBytes(2))
        let tap = try #require(layout.messages(11).first)
        #expect(tap.fixed64(1) == [1_120] && tap.strings(2) == ["tap"])
        let upload = try #require(spans.first { $0.strings(5) == ["upload"] })
        #expect(upload.messages(13).first?.rawBytes(2) == layout.rawBytes(2))
        #expect(frame.fixed64(7) == [1_100] && frame.fixed64(8) == [1_200])
    }

    @Test func jsonHasHexIdsAndStringTimes() throws {
        let text = OTLPExport.json(Self.trace(), unixOffset: 1_000)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let resourceSpans = try #require((object?["resourceSpans"] as? [[String: Any]])?.first)
        let scope = try #require((resourceSpans["scopeSpans"] as? [[String: Any]])?.first)
        let spans = try #require(scope["spans"] as? [[String: Any]])
        #expect(spans.count == 7)
        let frame = try #require(spans.first { $0["name"] as? String == "frame" })
        let layout = try #require(spans.first { $0["name"] as? String == "layout" })
        let traceID = try #require(frame["traceId"] as? String)
        #expect(traceID.count == 32 && traceID.allSatisfy(\.isHexDigit))
        #expect((frame["spanId"] as? String)?.count == 16)
        #expect(layout["parentSpanId"] as? String == frame["spanId"] as? String)
        #expect(frame["startTimeUnixNano"] as? String == "1100" && frame["endTimeUnixNano"] as? String == "1200")
        let attributes = try #require(frame["attributes"] as? [[String: Any]])
        let thread = try #require(attributes.first { $0["key"] as? String == "thread.id" })
        #expect((thread["value"] as? [String: Any])?["intValue"] as? String == "7")
    }

    /// Batches of a few spans each: every span in exactly one request, in
    /// order, each request with the resource; one request when unbounded,
    /// with the bytes `encode` gives.
    @Test func requestsSplitTheSpansWithoutLosingAny() throws {
        let trace = Self.trace()
        let whole = try PprofMessage(OTLPExport.encode(trace))
        let all = try #require(whole.messages(1).first?.messages(2).first).messages(2)
        var seen: [[UInt8]] = []
        var count = 0
        for request in OTLPExport.requests(trace, maxBytes: 400) {
            count += 1
            #expect(request.number == count)
            #expect(request.body.count <= 400 || request.spans.count == 1)
            let message = try PprofMessage(request.body)
            let resourceSpans = try #require(message.messages(1).first)
            #expect(resourceSpans.messages(1).count == 1)
            let spans = try #require(resourceSpans.messages(2).first).messages(2)
            #expect(spans.count == request.spans.count)
            seen += spans.compactMap { $0.rawBytes(2).first }
        }
        #expect(count > 1)
        #expect(seen == all.compactMap { $0.rawBytes(2).first })
        let single = Array(OTLPExport.requests(trace, maxBytes: .max))
        #expect(single.count == 1 && single.first?.body == OTLPExport.encode(trace))
    }

    /// Without an offset given, times are the trace's BOOTTIME plus the
    /// realtime offset it recorded.
    @Test func timesAreUnixTimeWhenTheTraceRecordsTheOffset() throws {
        var trace = Self.trace()
        trace.realtimeOffset = 1_700_000_000_000_000_000
        let request = try PprofMessage(OTLPExport.encode(trace))
        let spans = try #require(request.messages(1).first?.messages(2).first).messages(2)
        let frame = try #require(spans.first { $0.strings(5) == ["frame"] })
        #expect(frame.fixed64(7) == [1_700_000_000_000_000_100])
        trace.realtimeOffset = nil
        let old = try PprofMessage(OTLPExport.encode(trace))
        let oldFrame = try #require(
            old.messages(1).first?.messages(2).first?.messages(2).first { $0.strings(5) == ["frame"] })
        #expect(oldFrame.fixed64(7) == [100])
    }
}
