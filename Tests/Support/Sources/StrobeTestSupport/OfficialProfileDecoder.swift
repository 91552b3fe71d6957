import Foundation

/// The CPU samples of a trace as Perfetto's official schema reads them
/// (Tests/python/perfetto_profile.py): each sample's frames resolved
/// through its sequence's interned tables, and what did not resolve.
// The field names are the keys of the decoder's JSON.
// swift-format-ignore: AlwaysUseLowerCamelCase
public struct OfficialProfile: Decodable {
    // The field names are the keys of the decoder's JSON.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public struct Frame: Decodable {
        public var function: String?
        public var mapping_path: String?
        public var build_id: String?
        public var rel_pc: UInt64
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    public struct Sample: Decodable {
        public var ts: UInt64
        public var pid: Int
        public var tid: Int
        public var cpu: Int
        public var cpu_mode: Int
        /// The outermost caller first.
        public var frames: [Frame]
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    public struct Mapping: Decodable {
        public var path: String?
        public var build_id: String?
        public var start: UInt64
        public var end: UInt64
        /// The file offset `start` maps (`exact_offset`), when written.
        public var exact_offset: UInt64?
        /// The legacy `start_offset`, when written.
        public var start_offset: UInt64?
    }

    /// A sequence's `perf_sample_defaults`: its timebase.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public struct Defaults: Decodable {
        public var sequence: UInt32
        public var frequency: UInt64
        /// A `PerfEvents.Counter` (1: the software CPU clock).
        public var counter: Int
        /// A `PerfEvents.PerfClock` (4: CLOCK_BOOTTIME).
        public var timestamp_clock: Int
    }

    public var samples: [Sample]
    public var mappings: [Mapping]
    public var errors: [String]
    /// Samples counted lost by the trace's loss packets.
    public var lost_records: Int
    /// The `perf_sample_defaults` of the trace's sequences.
    public var defaults: [Defaults]

    public static let script = repositoryRoot.appendingPathComponent("Tests/python/perfetto_profile.py").path

    /// Decodes the samples of the trace at `path`.
    public static func decode(_ path: String) throws -> OfficialProfile {
        let outcome = try runProgram("/usr/bin/env", ["python3", script, path])
        guard outcome.status == 0 else { throw OfficialDecoder.DecodeFailure(message: outcome.errors) }
        return try JSONDecoder().decode(OfficialProfile.self, from: Data(outcome.output.utf8))
    }
}
