import Foundation

/// Decodes a trace with Perfetto's official schema (the PyPI `perfetto`
/// package, through Tests/python/perfetto_decode.py): an independent reader
/// that shares no code with Strobe.
public struct OfficialDecoder {
    /// An argument's value.
    public enum Value: Decodable, Equatable {
        case string(String)
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case null

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .int(value)
            } else {
                self = .double(try container.decode(Double.self))
            }
        }
    }

    // The field names are the keys of the official decoder's JSON.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public struct Slice: Decodable {
        public var track: UInt64
        public var name: String
        /// The event's categories, interned or spelled out.
        public var categories: [String]
        public var ts: UInt64
        public var dur: UInt64?
        public var depth: Int
        public var thread_dur: UInt64?
        public var flow_ids: [UInt64]
        public var terminating_flow_ids: [UInt64]
        public var args: [String: Value]
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    public struct Track: Decodable {
        public var name: String?
        public var kind: String
        public var pid: Int?
        public var tid: Int?
        public var parent: UInt64?
        public var counter_unit: String?
    }

    public struct Counter: Decodable {
        public var track: UInt64
        public var name: String?
        public var ts: UInt64
        public var value: Double
    }

    public struct Instant: Decodable {
        public var track: UInt64
        public var name: String
        public var categories: [String]
        public var ts: UInt64
        public var args: [String: Value]
        /// The packet's sequence.
        public var sequence: UInt32
        /// The clock of the packet's timestamp: its own, else the
        /// sequence's default; 0 when in trace time.
        public var clock: UInt32?
    }

    public struct Decoded: Decodable {
        public var packets: Int
        public var sequences: [UInt32]
        public var tracks: [String: Track]
        public var slices: [Slice]
        public var instants: [Instant]
        public var counters: [Counter]
        public var stats: [String: Double]
        public var errors: [String]
        /// CLOCK_REALTIME less CLOCK_BOOTTIME in each clock snapshot that
        /// holds both, in file order.
        public var realtimeOffsets: [Int64]

        enum CodingKeys: String, CodingKey {
            case packets, sequences, tracks, slices, instants, counters, stats, errors
            case realtimeOffsets = "realtime_offsets"
        }
        public func track(_ uuid: UInt64) -> Track? { tracks[String(uuid)] }

        public func slices(named name: String) -> [Slice] { slices.filter { $0.name == name } }

        public func stat(_ name: String) -> Double { stats[name] ?? 0 }
    }

    public static let script = repositoryRoot.appendingPathComponent("Tests/python/perfetto_decode.py").path

    /// Why the decoder cannot run here, or nil when it can.
    static let unavailableReason: String? = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import perfetto.protos.perfetto.trace.perfetto_trace_pb2"]
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
        } catch {
            return "python3 cannot be started: \(error)"
        }
        return process.terminationStatus == 0 ? nil : "the Python package `perfetto` is not installed"
    }()

    /// Whether tests that need the decoder run. In CI they always run (and
    /// fail if it is missing); elsewhere they skip, saying why.
    public static var isUsable: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        if let reason = unavailableReason {
            print("skipping official-decoder checks: \(reason)")
            return false
        }
        return true
    }

    public static func decode(_ path: String) throws -> Decoded {
        let outcome = try runProgram("/usr/bin/env", ["python3", script, path])
        guard outcome.status == 0 else { throw DecodeFailure(message: outcome.errors) }
        return try JSONDecoder().decode(Decoded.self, from: Data(outcome.output.utf8))
    }

    public struct DecodeFailure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { "perfetto_decode.py failed: \(message)" }
    }
}

/// A fresh path for a trace file.
public func temporaryTracePath(_ name: String = #function) -> String {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    return NSTemporaryDirectory() + "strobe-test-\(getpid())-\(safe)-\(UInt32.random(in: 0...UInt32.max)).pftrace"
}
