import CProtobufC
import CStrobe
import Foundation
import Strobe
import StrobeProtos
import StrobeTestSupport

/// Figures of the trace format: bytes per event and encoder speed.
///
/// The baseline is the straightforward encoding of the same events through
/// protobuf-c: one TracePacket per event with an absolute timestamp, the
/// name inline and the track named on every event, as a writer without
/// interning or incremental clocks would produce. It is packed in this same
/// process, so ratios compare like with like.
enum FormatBenchmarks {
    static func run() {
        let pairs = 500_000
        let flatOut = recordedBytes(pairs: pairs, spacingNanoseconds: 0) {
            Trace.begin("format interval")
            Trace.end()
        }
        let spaced = recordedBytes(pairs: 100_000, spacingNanoseconds: 2_000) {
            Trace.begin("format interval")
            Trace.end()
        }
        let naive = NaiveEncoding.bytesPerEvent(kind: .slices)
        Figure(
            name: "bytes per begin/end event, back to back", value: flatOut.bytesPerEvent, unit: "bytes/event",
            baselineName: "protobuf-c TrackEvent packets, absolute time, inline names", baselineValue: naive,
            target: "value <= 12 (Perfetto SDK: 19.55)"
        ).printLine()
        Figure(
            name: "bytes per begin/end event, 2 us apart", value: spaced.bytesPerEvent, unit: "bytes/event",
            baselineName: "protobuf-c TrackEvent packets, absolute time, inline names", baselineValue: naive,
            target: "value <= 12 (Perfetto SDK: 19.55)"
        ).printLine()

        let counters = recordedBytes(pairs: pairs, spacingNanoseconds: 0, eventsPerCall: 1) {
            Trace.counter("format counter", 1234)
        }
        Figure(
            name: "bytes per counter event", value: counters.bytesPerEvent, unit: "bytes/event",
            baselineName: "protobuf-c counter packets, absolute time, track per event",
            baselineValue: NaiveEncoding.bytesPerEvent(kind: .counters),
            target: "value <= 20 (Perfetto SDK: 34.5)"
        ).printLine()

        Figure(
            name: "encoder throughput", value: flatOut.eventsPerSecond / 1e6, unit: "M events/s",
            baselineName: "protobuf-c pack of the baseline packets", baselineValue: NaiveEncoding.packRate() / 1e6,
            target: "value >= 20"
        ).printLine()
    }

    struct Recording {
        var bytesPerEvent: Double
        var eventsPerSecond: Double
    }

    /// Records `pairs` calls of `body` (two events each unless told),
    /// optionally spaced in time, then times the stop, which encodes and
    /// writes everything in one go.
    static func recordedBytes(
        pairs: Int, spacingNanoseconds: UInt64, eventsPerCall: Int = 2, _ body: () -> Void
    ) -> Recording {
        let path = CoreBenchmarks.temporaryPath("format")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var best = Recording(bytesPerEvent: 0, eventsPerSecond: 0)
        for _ in 0..<3 {
            let session = try! TraceSession.start(CoreBenchmarks.quietConfiguration(path: path))
            for _ in 0..<pairs {
                body()
                if spacingNanoseconds > 0 {
                    let until = cstrobe_monotonic_ns() + spacingNanoseconds
                    while cstrobe_monotonic_ns() < until {}
                }
            }
            let start = cstrobe_monotonic_ns()
            try! session.stop()
            let seconds = Double(cstrobe_monotonic_ns() - start) / 1e9
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            let events = Double(pairs * eventsPerCall)
            best.bytesPerEvent = Double(size) / events
            best.eventsPerSecond = max(best.eventsPerSecond, events / seconds)
        }
        return best
    }
}

/// The baseline encoding, through protobuf-c.
enum NaiveEncoding {
    enum Kind { case slices, counters }

    static let sampleCount = 200_000

    /// Packs `sampleCount` events and returns the mean packed size,
    /// including each packet's field tag and length.
    static func bytesPerEvent(kind: Kind) -> Double {
        var total = 0
        let name = strdup("format interval")
        defer { free(name) }
        var timestamp: UInt64 = 1_700_000_000_000_000
        var buffer = [UInt8](repeating: 0, count: 256)
        for index in 0..<sampleCount {
            timestamp += 11
            total += pack(kind: kind, index: index, timestamp: timestamp, name: name!, into: &buffer)
        }
        return Double(total) / Double(sampleCount)
    }

    /// Events per second protobuf-c packs in the baseline encoding.
    static func packRate() -> Double {
        let name = strdup("format interval")
        defer { free(name) }
        var buffer = [UInt8](repeating: 0, count: 256)
        var best = 0.0
        for _ in 0..<3 {
            let start = cstrobe_monotonic_ns()
            var timestamp: UInt64 = 1_700_000_000_000_000
            var sink = 0
            for index in 0..<sampleCount {
                timestamp += 11
                sink &+= pack(kind: .slices, index: index, timestamp: timestamp, name: name!, into: &buffer)
            }
            let seconds = Double(cstrobe_monotonic_ns() - start) / 1e9
            if sink == 0 { print(sink) }
            best = max(best, Double(sampleCount) / seconds)
        }
        return best
    }

    private static func pack(
        kind: Kind, index: Int, timestamp: UInt64, name: UnsafeMutablePointer<CChar>, into buffer: inout [UInt8]
    ) -> Int {
        var event = Perfetto__Protos__TrackEvent()
        perfetto__protos__track_event__init(&event)
        event.has_track_uuid = 1
        event.track_uuid = 2_305_843_009_213_701_902
        event.has_type = 1
        switch kind {
        case .slices:
            let begin = index % 2 == 0
            event.type =
                begin
                ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
                : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END
            if begin {
                event.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME
                event.name = name
            }
        case .counters:
            event.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER
            event.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE
            event.counter_value = 1234
        }
        var packet = Perfetto__Protos__TracePacket()
        perfetto__protos__trace_packet__init(&packet)
        packet.has_timestamp = 1
        packet.timestamp = timestamp
        packet.has_trusted_packet_sequence_id = 1
        packet.trusted_packet_sequence_id = 2
        return withUnsafeMutablePointer(to: &event) { event in
            packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT
            packet.track_event = event
            return withUnsafeMutablePointer(to: &packet.base) { message in
                let size = protobuf_c_message_get_packed_size(message)
                buffer.withUnsafeMutableBufferPointer { bytes in
                    _ = protobuf_c_message_pack(message, bytes.baseAddress!)
                }
                // The Trace.packet field's tag and length prefix.
                return size + 1 + (size < 128 ? 1 : 2)
            }
        }
    }
}
