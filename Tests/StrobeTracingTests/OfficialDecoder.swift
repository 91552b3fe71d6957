import Foundation

/// Decodes a trace with Perfetto's official schema (the PyPI `perfetto`
/// package, through Tests/python/perfetto_decode.py): an independent reader
/// that shares no code with Strobe.
struct OfficialDecoder {
    enum Value: Decodable, Equatable {
        case string(String)
        case bool(Bool)
        case int(Int64)
        case double(Double)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(String.self) {
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

    struct Slice: Decodable {
        var track: UInt64
        var name: String
        var ts: UInt64
        var dur: UInt64?
        var depth: Int
        var args: [String: Value]
    }

    struct Track: Decodable {
        var name: String?
        var kind: String
        var pid: Int?
        var parent: UInt64?
    }

    struct Instant: Decodable {
        var track: UInt64
        var name: String
        var ts: UInt64
        var args: [String: Value]
    }

    struct Decoded: Decodable {
        var tracks: [String: Track]
        var slices: [Slice]
        var instants: [Instant]
        var errors: [String]

        func track(_ uuid: UInt64) -> Track? { tracks[String(uuid)] }
        func slices(named name: String) -> [Slice] { slices.filter { $0.name == name } }
    }

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Tests/python/perfetto_decode.py").path
    }()

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
    static var isUsable: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        if let reason = unavailableReason {
            print("skipping official-decoder checks: \(reason)")
            return false
        }
        return true
    }

    static func decode(_ path: String) throws -> Decoded {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw DecodeFailure(message: String(decoding: message, as: UTF8.self))
        }
        return try JSONDecoder().decode(Decoded.self, from: data)
    }

    struct DecodeFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { "perfetto_decode.py failed: \(message)" }
    }
}
