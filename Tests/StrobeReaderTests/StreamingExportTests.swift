import Foundation
import StrobeTestTraits
import Testing

@testable import Strobe
@testable import StrobeReader

/// The streaming exports against the exports of the parsed trace: the same
/// spans, byte for byte each (in another order, and in requests of bounded
/// size), the same JSON spans, the same pprof bytes, and a scan that agrees
/// with the reader.
@Suite(.serialized, .processWide)
struct StreamingExportTests {
    /// The `Span` messages of an OTLP request or file, and its resources.
    static func spans(_ bytes: [UInt8]) throws -> (spans: [[UInt8]], resources: Set<[UInt8]>, parts: Int) {
        let request = try PprofMessage(bytes)
        var spans: [[UInt8]] = []
        var resources: Set<[UInt8]> = []
        for resourceSpans in request.messages(1) {
            resources.formUnion(resourceSpans.rawBytes(1))
            for scope in resourceSpans.messages(2) { spans += scope.rawBytes(2) }
        }
        return (spans, resources, request.messages(1).count)
    }

    /// The streaming export of `path` as one file.
    static func streamedFile(
        _ path: String, encoding: OTLPStream.Encoding = .protobuf, maxBytes: Int = OTLPRequests.defaultMaxBytes,
        partSize: Int = TraceChunks.partSize
    ) throws -> [UInt8] {
        var stream = try OTLPStream(
            contentsOf: path, encoding: encoding, unixOffset: nil, maxBytes: maxBytes, partSize: partSize)
        var file: [UInt8] = []
        while let part = try stream.nextFilePart() { file += part }
        return file
    }

    /// Checks the streaming export of `path` against the parsed trace's.
    static func expectSameSpans(_ path: String, maxBytes: Int, partSize: Int = TraceChunks.partSize) throws {
        let parsed = try TraceReader.read(contentsOf: path)
        let whole = try spans(OTLPExport.encode(parsed))
        let streamed = try spans(streamedFile(path, maxBytes: maxBytes, partSize: partSize))
        #expect(streamed.spans.count == whole.spans.count)
        #expect(
            streamed.spans.sorted { $0.lexicographicallyPrecedes($1) }
                == whole.spans.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(streamed.resources == whole.resources)
        // Requests one by one: each within the bound, every span once.
        var stream = try OTLPStream(contentsOf: path, maxBytes: maxBytes)
        var count = 0
        while let request = try stream.next() {
            #expect(request.spans.lowerBound == count)
            let body = try spans(request.body)
            #expect(body.spans.count == request.spans.count && body.parts == 1)
            #expect(request.body.count <= maxBytes || request.spans.count == 1)
            count += request.spans.count
        }
        #expect(count == whole.spans.count && stream.totalSpans == count)
    }

    /// The JSON spans of an OTLP/JSON text, by span id.
    static func jsonSpans(_ text: [UInt8]) throws -> [String: NSDictionary] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text)) as? [String: Any])
        var spans: [String: NSDictionary] = [:]
        for resourceSpans in object["resourceSpans"] as? [[String: Any]] ?? [] {
            for scope in resourceSpans["scopeSpans"] as? [[String: Any]] ?? [] {
                for span in scope["spans"] as? [[String: Any]] ?? [] {
                    spans[span["spanId"] as? String ?? ""] = span as NSDictionary
                }
            }
        }
        return spans
    }

    @Test func otlpStreamGivesTheParsedTracesSpans() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ReaderTests.recordVariedTrace(path)
        try Self.expectSameSpans(path, maxBytes: OTLPRequests.defaultMaxBytes)
        try Self.expectSameSpans(path, maxBytes: 1024)

        let whole = try Self.jsonSpans(Array(OTLPExport.json(TraceReader.read(contentsOf: path)).utf8))
        let streamed = try Self.jsonSpans(Self.streamedFile(path, encoding: .json, maxBytes: 1024))
        #expect(streamed.count == whole.count)
        #expect(streamed == whole)
    }

    @Test func instantsParentsAndFlowsMatchOnAHandWrittenTrace() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(HandWrittenTrace.bytes()).write(to: URL(fileURLWithPath: path))
        let parsed = try TraceReader.read(contentsOf: path)
        #expect(parsed.intervals.count == 10 && parsed.truncation == nil)
        try Self.expectSameSpans(path, maxBytes: OTLPRequests.defaultMaxBytes)
        try Self.expectSameSpans(path, maxBytes: 1024)
        let whole = try Self.jsonSpans(Array(OTLPExport.json(parsed).utf8))
        #expect(try Self.jsonSpans(Self.streamedFile(path, encoding: .json)) == whole)
        // What the parsed trace's export does with the edge cases, which
        // the streamed one matches above.
        let model = OTLPSpans(parsed)
        func span(_ name: String) throws -> OTLPSpans.Span { try #require(model.spans.first { $0.name == name }) }
        #expect(try span("B").events.map { parsed.instants[$0].name } == ["at B's start"])
        #expect(try span("C").events.map { parsed.instants[$0].name } == ["at B's end and C's start"])
        #expect(try span("A").events.map { parsed.instants[$0].name } == ["at A's end"])
        #expect(try span("U").events.map { parsed.instants[$0].name } == ["at U's start"])
        #expect(model.spans.filter(\.isInstant).map(\.name) == ["alone", "after U began"])
        #expect(try span("query").parentIndex.map { model.spans[$0].name } == "request")
        #expect(try span("consume").links == [model.spans.firstIndex { $0.name == "produce" }!])
    }

    @Test func pprofFileExportGivesTheParsedProfilesBytes() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.cpuProfile = .init(frequency: 999)
        var sink = 0.0
        try TraceSession.record(configuration) {
            for round in 0..<6 {
                Trace.interval(round.isMultiple(of: 2) ? "busy" : "other") {
                    let start = DispatchTime.now().uptimeNanoseconds
                    while DispatchTime.now().uptimeNanoseconds - start < 15_000_000 { sink += 1 }
                }
            }
        }
        #expect(sink > 0)
        let profile = try CPUProfile.read(contentsOf: path)
        let parsed = try TraceReader.read(contentsOf: path)
        let all = try PprofExport.encode(contentsOf: path)
        #expect(all.samples == profile.samples.count && all.exportedSamples == profile.samples.count)
        #expect(all.bytes == PprofExport.encode(profile, threads: parsed.threads))
        let busy = try PprofExport.encode(contentsOf: path, within: "busy")
        let inside = profile.samples(within: parsed.intervals(named: "busy"))
        #expect(busy.instances == 3 && busy.exportedSamples == inside.count)
        #expect(busy.bytes == PprofExport.encode(profile, samples: inside, threads: parsed.threads))
        // Read in small parts, the same bytes.
        for partSize in [64, 1000] {
            let small = try PprofExport.encode(contentsOf: path, within: nil, timeNanos: nil, partSize: partSize)
            #expect(small.bytes == all.bytes)
            let smallBusy = try PprofExport.encode(
                contentsOf: path, within: "busy", timeNanos: nil, partSize: partSize)
            #expect(smallBusy.bytes == busy.bytes)
        }
        let none = try PprofExport.encode(contentsOf: path, within: "no such interval")
        #expect(none.instances == 0 && none.exportedSamples == 0)
    }

    @Test func scanAgreesWithTheReader() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ReaderTests.recordVariedTrace(path)
        let parsed = try TraceReader.read(contentsOf: path)
        let scan = try TraceScan.read(contentsOf: path)
        #expect(scan.threads == parsed.threads)
        #expect(scan.process == parsed.process)
        #expect(scan.origin == parsed.origin)
        #expect(scan.realtimeOffset == parsed.realtimeOffset)
        #expect(scan.intervalCount == parsed.intervals.count)
        #expect(scan.instantCount == parsed.instants.count)
        #expect(scan.packetCount == parsed.packetCount && scan.decodedPacketCount == parsed.decodedPacketCount)
        #expect(scan.firstTime == min(parsed.intervals.first?.start ?? .max, parsed.instants.first?.time ?? .max))
        #expect(scan.isComplete && scan.notATrace == nil)

        let foreign = ReaderTests.temporaryPath() + ".txt"
        defer { try? FileManager.default.removeItem(atPath: foreign) }
        try Data("not a trace at all\n".utf8).write(to: URL(fileURLWithPath: foreign))
        let notATrace = try TraceScan.read(contentsOf: foreign).notATrace
        #expect(notATrace == TraceReader.read(bytes: Array("not a trace at all\n".utf8), source: foreign).notATrace)
    }

    @Test func smallPartsAndCutFilesGiveTheParsedTracesExports() throws {
        let path = ReaderTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try ReaderTests.recordVariedTrace(path)
        // Parts smaller than some packets, so that reading stops mid-packet
        // and a part grows to hold one.
        for partSize in [64, 257, 4096] { try Self.expectSameSpans(path, maxBytes: 1024, partSize: partSize) }
        // A file cut short anywhere: what came before, and the same problem.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let cut = path + ".cut"
        defer { try? FileManager.default.removeItem(atPath: cut) }
        for eighth in 1..<8 {
            try Data(bytes.prefix(bytes.count * eighth / 8)).write(to: URL(fileURLWithPath: cut))
            let parsed = try TraceReader.read(contentsOf: cut)
            for partSize in [100, TraceChunks.partSize] {
                let stream = try OTLPStream(
                    contentsOf: cut, encoding: .protobuf, unixOffset: nil, maxBytes: 4096, partSize: partSize)
                #expect(stream.scan.truncation == parsed.truncation, "cut at \(eighth)/8")
                #expect(stream.scan.packetCount == parsed.packetCount)
                try Self.expectSameSpans(cut, maxBytes: 4096, partSize: partSize)
            }
        }
    }

    @Test func packedRangesHoldWhatTheirRangesHold() {
        // Mostly in order, some nested or overlapping, some out of order,
        // some empty; more than a checkpoint's stride of them.
        var generator = SystemRandomNumberGenerator()
        var ranges: [(start: UInt64, end: UInt64)] = []
        var time: UInt64 = 1_000
        for _ in 0..<2_000 {
            time += UInt64.random(in: 0...50, using: &generator)
            let start = Bool.random(using: &generator) ? time : time - min(time, UInt64.random(in: 0...400))
            ranges.append((start, start + UInt64.random(in: 0...40, using: &generator)))
        }
        var packed = ThreadTimeRanges.Packed()
        for range in ranges { packed.append(range) }
        packed.finish()
        let threads = ThreadTimeRanges([7: [packed]])
        for probe in stride(from: UInt64(900), to: time + 100, by: 3) {
            let expected = ranges.contains { $0.start <= probe && probe < $0.end }
            #expect(threads.contains(tid: 7, time: probe) == expected, "at \(probe)")
        }
        #expect(!threads.contains(tid: 8, time: 1_000))
        #expect(packed.bytes.count < ranges.count * 5)
    }

    @Test func partsOfAFileHoldWholeFields() {
        // A packet cut by the end of the bytes waits for more; a tag no
        // trace field has, or a length past the end of the file, is broken.
        let packets: [UInt8] = [0x0a, 0x02, 0x08, 0x01, 0x0a, 0x03, 0x08]
        packets.withUnsafeBufferPointer { buffer in
            let cut = TraceChunks.wholeFields(buffer.baseAddress!, count: buffer.count, remaining: 100)
            #expect(cut.end == 4 && !cut.isBroken)
            let pastEnd = TraceChunks.wholeFields(buffer.baseAddress!, count: buffer.count, remaining: 6)
            #expect(pastEnd.end == 4 && pastEnd.isBroken)
        }
        let group: [UInt8] = [0x0a, 0x00, 0x0b]
        group.withUnsafeBufferPointer { buffer in
            let broken = TraceChunks.wholeFields(buffer.baseAddress!, count: buffer.count, remaining: 3)
            #expect(broken.end == 2 && broken.isBroken)
        }
    }
}
