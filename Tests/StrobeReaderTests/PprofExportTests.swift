import StrobeTestTraits
import Testing

@testable import StrobeReader

/// The pprof export, read back with a small decoder of its own: the string
/// table, the sample types, the ids that link samples to locations,
/// mappings and functions, and the thread labels.
@Suite(.processWide)
struct PprofExportTests {
    /// Two threads; thread 7 samples `main → work → leaf` twice and
    /// `main → work` once, thread 8 `main → leaf` once, at 1000 Hz.
    static func profile() -> CPUProfile {
        var profile = CPUProfile()
        profile.functions = ["main", "work", "leaf"]
        profile.mappings = [
            CPUProfile.Mapping(
                path: "/usr/bin/app", buildID: "abcd0123", start: 0x40_0000, end: 0x50_0000, fileOffset: 0x1000)
        ]
        profile.frames = (0..<3).map {
            CPUProfile.Frame(function: $0, mapping: 0, relativePC: 0x1100 + UInt64($0) * 16)
        }
        profile.stacks = [[0, 1, 2], [0, 1], [0, 2]]
        profile.frameStacks = profile.stacks
        profile.frequency = 1000
        profile.samples = [
            CPUProfile.Sample(time: 1_000, tid: 7, cpu: 0, stack: 0, frameStack: 0),
            CPUProfile.Sample(time: 2_000, tid: 7, cpu: 0, stack: 0, frameStack: 0),
            CPUProfile.Sample(time: 3_000, tid: 7, cpu: 0, stack: 1, frameStack: 1),
            CPUProfile.Sample(time: 4_000, tid: 8, cpu: 1, stack: 2, frameStack: 2),
        ]
        return profile
    }

    @Test func stringTableSampleTypesAndPeriod() throws {
        let decoded = try PprofMessage(PprofExport.encode(Self.profile()))
        let strings = decoded.strings(6)
        #expect(strings.first == "")
        #expect(Set(strings).count == strings.count)
        let types = try decoded.messages(1).map { try ($0.number(1), $0.number(2)) }
        #expect(types.map { strings[Int($0.0)] } == ["samples", "cpu"])
        #expect(types.map { strings[Int($0.1)] } == ["count", "nanoseconds"])
        let period = try #require(decoded.messages(11).first)
        #expect(try strings[Int(period.number(1))] == "cpu")
        #expect(decoded.numbers(12) == [1_000_000])
        #expect(decoded.numbers(10) == [3_000])
    }

    @Test func samplesLinkToLocationsMappingsAndFunctions() throws {
        let decoded = try PprofMessage(PprofExport.encode(Self.profile(), threads: Self.threads))
        let strings = decoded.strings(6)
        let functions = try Dictionary(
            uniqueKeysWithValues: decoded.messages(5).map { try ($0.number(1), strings[Int($0.number(2))]) })
        #expect(Set(functions.values) == ["main", "work", "leaf"])
        let mappings = decoded.messages(3)
        #expect(mappings.count == 1)
        let mapping = try #require(mappings.first)
        #expect(try strings[Int(mapping.number(5))] == "/usr/bin/app")
        #expect(try strings[Int(mapping.number(6))] == "abcd0123")
        #expect(try mapping.number(2) == 0x40_0000 && mapping.number(3) == 0x50_0000 && mapping.number(4) == 0x1000)
        var locations: [UInt64: String] = [:]
        for location in decoded.messages(4) {
            #expect(try location.number(2) == mapping.number(1))
            // The function's entry, where the process mapped it.
            let address = try location.number(3)
            #expect(address >= 0x40_0100 && address < 0x40_0200)
            let line = try #require(location.messages(4).first)
            locations[try location.number(1)] = functions[try line.number(1)]
        }
        var stacks: [String: [UInt64]] = [:]
        for sample in decoded.messages(2) {
            let path = sample.packed(1).map { locations[$0] ?? "?" }.joined(separator: "<")
            var thread = ""
            var tid: UInt64 = 0
            for label in sample.messages(3) {
                switch try strings[Int(label.number(1))] {
                case "thread": thread = try strings[Int(label.number(2))]
                case "thread_id": tid = try label.number(3)
                default: Issue.record("unexpected label")
                }
            }
            stacks["\(thread)/\(tid): \(path)"] = sample.packed(2)
        }
        // Leaf first; one sample per thread and stack, with its count and
        // its CPU time.
        #expect(
            stacks == [
                "render/7: leaf<work<main": [2, 2_000_000], "render/7: work<main": [1, 1_000_000],
                "io/8: leaf<main": [1, 1_000_000],
            ])
    }

    @Test func withoutARateOnlyCountsAreWritten() throws {
        var profile = Self.profile()
        profile.frequency = nil
        let decoded = try PprofMessage(PprofExport.encode(profile, samples: Array(profile.samples.prefix(1))))
        let strings = decoded.strings(6)
        #expect(try decoded.messages(1).map { try strings[Int($0.number(1))] } == ["samples"])
        #expect(decoded.messages(2).map { $0.packed(2) } == [[1]])
        #expect(decoded.numbers(12) == [1])
    }

    static let threads = [
        TraceThread(tid: 7, pid: 1, name: "render", trackUUID: 1),
        TraceThread(tid: 8, pid: 1, name: "io", trackUUID: 2),
    ]
}

/// A protobuf message as its fields: varints and length-delimited bytes by
/// field number, enough to read pprof back.
struct PprofMessage {
    struct Malformed: Error {}

    private var varints: [UInt64: [UInt64]] = [:]
    private var blobs: [UInt64: [[UInt8]]] = [:]
    private var fixed: [UInt64: [UInt64]] = [:]

    init(_ bytes: [UInt8]) throws {
        var position = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard position < bytes.count, shift < 64 else { throw Malformed() }
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        while position < bytes.count {
            let key = try varint()
            switch key & 7 {
            case 0: varints[key >> 3, default: []].append(try varint())
            case 2:
                let length = Int(try varint())
                guard position + length <= bytes.count else { throw Malformed() }
                blobs[key >> 3, default: []].append(Array(bytes[position..<position + length]))
                position += length
            case 1:
                guard position + 8 <= bytes.count else { throw Malformed() }
                let value = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[position + $1]) << UInt64(8 * $1) }
                fixed[key >> 3, default: []].append(value)
                position += 8
            default: throw Malformed()
            }
        }
    }

    func numbers(_ field: UInt64) -> [UInt64] { varints[field] ?? [] }

    func fixed64(_ field: UInt64) -> [UInt64] { fixed[field] ?? [] }

    func rawBytes(_ field: UInt64) -> [[UInt8]] { blobs[field] ?? [] }

    func number(_ field: UInt64) throws -> UInt64 {
        guard let value = varints[field]?.first else { throw Malformed() }
        return value
    }

    func strings(_ field: UInt64) -> [String] { (blobs[field] ?? []).map { String(decoding: $0, as: UTF8.self) } }

    func messages(_ field: UInt64) -> [PprofMessage] { (blobs[field] ?? []).compactMap { try? PprofMessage($0) } }

    /// A packed repeated varint field.
    func packed(_ field: UInt64) -> [UInt64] {
        (blobs[field] ?? []).flatMap { blob -> [UInt64] in
            var values: [UInt64] = []
            var value: UInt64 = 0
            var shift: UInt64 = 0
            for byte in blob {
                value |= UInt64(byte & 0x7f) << shift
                shift += 7
                if byte < 0x80 {
                    values.append(value)
                    value = 0
                    shift = 0
                }
            }
            return values
        }
    }
}
