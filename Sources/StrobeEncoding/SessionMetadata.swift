import CProtobufC
import PerfettoWire
import StrobeProtos

/// The metadata a session writes: the app's values and the sampling
/// probability, in a form the crash handler can hold as bytes.
package struct SessionMetadata: Sendable {
    /// The app's names and values, in order.
    package var entries: [(name: String, value: String)]
    /// The probability that the session was recorded at all.
    package var samplingProbability: Double

    /// The name of the instant that carries the metadata in a trace.
    package static let eventName = "strobe.metadata"
    /// The name under which the sampling probability is written.
    package static let samplingProbabilityName = "sampling.probability"

    package init(entries: [(name: String, value: String)], samplingProbability: Double) {
        self.entries = entries
        self.samplingProbability = samplingProbability
    }

    /// NUL-terminated name and value pairs, the sampling probability first
    /// under its own name: the crash file's METADATA section.
    package var serialized: [UInt8] {
        var bytes: [UInt8] = []
        for (name, value) in [(Self.samplingProbabilityName, "\(samplingProbability)")] + entries {
            bytes += Array(name.utf8) + [0] + Array(value.utf8) + [0]
        }
        return bytes
    }

    /// Reads ``serialized`` back; nil when the bytes are not in that form.
    package init?(serialized bytes: [UInt8]) {
        var fields = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard fields.last == "" else { return nil }
        fields.removeLast()
        guard fields.count >= 2, fields.count % 2 == 0, fields[0] == Self.samplingProbabilityName,
            let probability = Double(fields[1])
        else { return nil }
        samplingProbability = probability
        entries = stride(from: 2, to: fields.count, by: 2).map { (name: fields[$0], value: fields[$0 + 1]) }
    }

    /// Whether this is what a trace without metadata means: no values and a
    /// session recorded with probability 1.
    package var isDefault: Bool { entries.isEmpty && samplingProbability >= 1 }

    /// Appends the `strobe.metadata` instant on the process track `track`, at
    /// `boottime`, on the metadata sequence; nothing when ``isDefault``, so a
    /// session configured without metadata writes the trace it always did.
    func appendPacket(track: UInt64, boottime: UInt64, sequenceID: UInt32, to buffer: inout ProtoBuffer) {
        guard !isDefault else { return }
        let strings = CStrings()
        var annotations = [Perfetto__Protos__DebugAnnotation](
            repeating: Perfetto__Protos__DebugAnnotation(), count: entries.count + 1)
        for index in annotations.indices {
            perfetto__protos__debug_annotation__init(&annotations[index])
            annotations[index].name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME
        }
        annotations[0].name = strings.make(Self.samplingProbabilityName)
        annotations[0].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE
        annotations[0].double_value = samplingProbability
        for (index, entry) in entries.enumerated() {
            annotations[index + 1].name = strings.make(entry.name)
            annotations[index + 1].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE
            annotations[index + 1].string_value = strings.make(entry.value)
        }
        var event = Perfetto__Protos__TrackEvent()
        perfetto__protos__track_event__init(&event)
        event.has_type = 1
        event.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT
        event.has_track_uuid = 1
        event.track_uuid = track
        event.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME
        event.name = strings.make(Self.eventName)
        var packet = Perfetto__Protos__TracePacket()
        perfetto__protos__trace_packet__init(&packet)
        packet.has_trusted_packet_sequence_id = 1
        packet.trusted_packet_sequence_id = sequenceID
        packet.has_timestamp = 1
        packet.timestamp = boottime
        packet.has_timestamp_clock_id = 1
        packet.timestamp_clock_id = PerfettoWire.Clock.boottime
        annotations.withUnsafeMutableBufferPointer { annotations in
            var pointers = (0..<annotations.count).map { Optional(annotations.baseAddress! + $0) }
            pointers.withUnsafeMutableBufferPointer { pointers in
                event.n_debug_annotations = pointers.count
                event.debug_annotations = pointers.baseAddress
                withUnsafeMutablePointer(to: &event) { event in
                    packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT
                    packet.track_event = event
                    PacketBuilder.append(&packet, to: &buffer)
                }
            }
        }
        withExtendedLifetime(strings) {}
    }
}
