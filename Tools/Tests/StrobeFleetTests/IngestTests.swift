import Foundation
import Strobe
import StrobeDiff
import StrobeFleet
import StrobeHistory
import StrobeHistoryStore
import StrobeStatistics
import StrobeStoreTestSupport
import StrobeTestSupport
import StrobeTestTraits
import Testing

/// `strobe ingest`: real traces from the SDK into the store, each once, with
/// damaged and foreign files named and skipped.
@Suite(.serialized, .processWide)
struct IngestTests {
    static let versions = ["5.1", "5.2"]
    static let devices = ["mid", "high", "low"]

    /// Six traces (two versions × three device classes) and the damaged and
    /// foreign files made from them; returns the damaged files' names.
    static func makeFleet(in directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory + "/fleet/nested", withIntermediateDirectories: true)
        var good: [[UInt8]] = []
        for (index, (version, device)) in versions.flatMap({ v in devices.map { (v, $0) } }).enumerated() {
            let path = directory + "/fleet/\(index < 3 ? "" : "nested/")trace-\(index).pftrace"
            try SDKTraces.write(
                path,
                metadata: TraceMetadata(
                    appName: "Lens", appVersion: version, deviceModel: "model-\(device)",
                    dimensions: ["device.class": device]))
            good.append([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        var damaged: [String: [UInt8]] = [:]
        let trace = good[0]
        let packets = TracePackets.offsets(trace)
        let largest = packets.max { $0.end - $0.payload < $1.end - $1.payload }!
        damaged["cut-inside-a-packet.pftrace"] = Array(trace.prefix((largest.payload + largest.end) / 2))
        damaged["cut-inside-a-length.pftrace"] = Array(trace.prefix(packets[1].field + 1))
        var tag = trace
        tag[packets[2].field] = 0x0b // field 1 as a start-group: not a Trace packet
        damaged["flipped-tag.pftrace"] = tag
        var length = trace
        length[packets[0].field + 1] ^= 0x40 // the first packet claims more bytes than it has
        damaged["flipped-length.pftrace"] = length
        damaged["empty.pftrace"] = []
        damaged["notes.txt"] = Array("these are not the traces you are looking for\n".utf8)
        var generator = SeededGenerator(seed: 11)
        damaged["random.bin"] = (0..<4096).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        damaged["image.png"] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + Array(repeating: 0, count: 64)
        for (name, bytes) in damaged {
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/fleet/nested/" + name))
        }
        return damaged.keys.sorted()
    }

    @Test(arguments: StoreBackend.tested)
    func tracesAreStoredOnceAndDamagedOnesAreNamedAndSkipped(backend: StoreBackend) async throws {
        try await ScratchStore.with(backend) { scratch in
            let damaged = try Self.makeFleet(in: scratch.directory)
            let files = try FleetIngestion.traceFiles(in: [scratch.directory + "/fleet"])
            #expect(files.count == 6 + damaged.count)
            let store = try await FleetStores.open(scratch.location)
            let first = try await FleetIngestion.ingest(files: files, into: store, batchSize: 4)
            #expect(first.added == 6)
            #expect(first.alreadyStored == 0)
            #expect(first.refused.map { ($0.source as NSString).lastPathComponent }.sorted() == damaged)
            #expect(
                first.description == "\(6 + damaged.count) traces: 6 added, 0 already stored, \(damaged.count) skipped")
            let again = try await FleetIngestion.ingest(files: files, into: store, batchSize: 5)
            #expect(again.added == 0 && again.alreadyStored == 6 && again.refused.count == damaged.count)
            #expect(try await store.traceCount() == 6)

            let work = try await store.sessions(metric: "work", kind: .interval, filters: [:])
            #expect(work.count == 6)
            for session in work {
                #expect(session.count == 50)
                #expect(session.samplingProbability == 1)
                let sketch = try QuantileSketch(serialized: session.sketch)
                #expect(sketch.count == 50 && sketch.minimum > 0)
                #expect(abs(sketch.sum - session.total) <= 1e-6 * session.total)
            }
            let filtered = try await store.sessions(
                metric: "work", kind: .interval, filters: ["app.version": "5.2", "device.class": "low"])
            #expect(filtered.count == 1)
            #expect(filtered.first?.metadata["device.model"] == "model-low")
            #expect(filtered.first?.metadata["app.name"] == "Lens")
            let queue = try await store.sessions(metric: "queue", kind: .counter, filters: ["app.version": "5.1"])
            #expect(queue.count == 3 && queue.allSatisfy { $0.count == 5 && $0.total == 10 })
            #expect(try await store.sessions(metric: "queue", kind: .interval, filters: [:]).isEmpty)
            await store.close()
        }
    }

    /// A hundred damaged files mixed into an ingest, made at random (seeded)
    /// from the SDK's traces and from foreign bytes: each is named and
    /// skipped, and every good trace is stored.
    @Test func aHundredDamagedFilesAreEachNamedAndSkipped() async throws {
        try await ScratchStore.with(.sqlite) { scratch in
            _ = try Self.makeFleet(in: scratch.directory)
            let folder = scratch.directory + "/fleet"
            let good = try (0..<6).map { index in
                [UInt8](
                    try Data(
                        contentsOf: URL(
                            fileURLWithPath: folder + "/\(index < 3 ? "" : "nested/")trace-\(index).pftrace")))
            }
            try FileManager.default.removeItem(atPath: folder + "/nested")
            try FileManager.default.createDirectory(atPath: folder + "/nested", withIntermediateDirectories: true)
            for index in 3..<6 {
                try Data(good[index]).write(to: URL(fileURLWithPath: folder + "/nested/trace-\(index).pftrace"))
            }
            var generator = SeededGenerator(seed: 2026)
            func below(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
            var damaged: [String] = []
            for index in 0..<100 {
                let trace = good[below(good.count)]
                let packets = TracePackets.offsets(trace)
                var bytes: [UInt8]
                let kind: String
                switch index % 5 {
                case 0: // cut inside a packet's payload
                    let sized = packets.filter { $0.end - $0.payload >= 2 }
                    let packet = sized[below(sized.count)]
                    bytes = Array(trace.prefix(packet.payload + 1 + below(packet.end - packet.payload - 1)))
                    kind = "cut-payload"
                case 1: // cut inside a length of two or more bytes
                    let long = packets.filter { $0.payload - $0.field >= 3 }
                    let packet = long[below(long.count)]
                    bytes = Array(trace.prefix(packet.field + 2))
                    kind = "cut-length"
                case 2: // a packet's tag made a group or a reserved wire type
                    bytes = trace
                    bytes[packets[below(packets.count)].field] = [0x0b, 0x0c, 0x0e, 0x0f][below(4)]
                    kind = "tag"
                case 3: // the end of the last packet lost
                    let last = packets[packets.count - 1]
                    bytes = Array(trace.dropLast(1 + below(max(1, last.end - last.payload - 1))))
                    kind = "cut-end"
                default: // foreign: random bytes, text, an image header, nothing
                    switch below(4) {
                    case 0: bytes = [0] + (0..<below(8192)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                    case 1: bytes = Array("line \(index) of a log, not a trace\n".utf8)
                    case 2:
                        bytes =
                            [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + Array(repeating: 0, count: below(512))
                    default: bytes = []
                    }
                    kind = "foreign"
                }
                let name = "damaged-\(index)-\(kind).pftrace"
                try Data(bytes).write(to: URL(fileURLWithPath: folder + "/nested/" + name))
                damaged.append(name)
            }
            let files = try FleetIngestion.traceFiles(in: [folder])
            #expect(files.count == 106)
            let store = try await FleetStores.open(scratch.location)
            let summary = try await FleetIngestion.ingest(files: files, into: store, batchSize: 16)
            await store.close()
            #expect(summary.added == 6)
            #expect(summary.refused.count == 100)
            #expect(summary.refused.map { ($0.source as NSString).lastPathComponent }.sorted() == damaged.sorted())
            #expect(summary.description == "106 traces: 6 added, 0 already stored, 100 skipped")
            for refusal in summary.refused where !refusal.source.hasSuffix("foreign.pftrace") {
                #expect(refusal.reason.contains("byte "), "\(refusal)")
            }
        }
    }

    @Test func refusalsSayWhatIsWrongAndWhere() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-refusals-\(getpid())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try Self.makeFleet(in: directory)
        func reason(_ name: String) throws -> String {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/fleet/nested/" + name)))
            switch FleetTraceExtraction.record(of: bytes, source: name) {
            case .success: return "accepted"
            case .failure(let refusal): return refusal.reason
            }
        }
        #expect(try reason("empty.pftrace") == "empty file")
        #expect(try reason("cut-inside-a-packet.pftrace").hasPrefix("cut short: byte "))
        #expect(try reason("cut-inside-a-length.pftrace").hasPrefix("cut short: byte "))
        #expect(try reason("notes.txt").contains("byte 0"))
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/fleet/trace-0.pftrace")))
        guard case .success(let record) = FleetTraceExtraction.record(of: good, source: "trace-0") else {
            Issue.record("a trace the SDK wrote is refused")
            return
        }
        #expect(record.id == FleetTraceRecord.identity(of: good))
        #expect(record.id.hasPrefix("sha256:") && record.id.count == 7 + 64)
        #expect(record.metadata["app.version"] == "5.1")
        #expect(record.metrics.map(\.name) == ["work", "queue"])
    }

    @Test func aPathThatDoesNotExistIsRefusedBeforeAnything() {
        #expect { try FleetIngestion.traceFiles(in: ["/nonexistent/strobe-fleet"]) } throws: {
            "\($0)" == "/nonexistent/strobe-fleet: no such file or directory"
        }
    }
}
