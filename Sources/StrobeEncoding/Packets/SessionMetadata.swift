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
        let annotations: [(key: String, value: TraceMark.Value)] =
            [(Self.samplingProbabilityName, .double(samplingProbability))]
            + entries.map { ($0.name, .string($0.value)) }
        TraceMark(name: Self.eventName, boottime: boottime, track: track, annotations: annotations)
            .append(sequenceID: sequenceID, to: &buffer)
    }
}
