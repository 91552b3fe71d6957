import StrobeEncoding

extension SessionMetadata {
    /// The metadata of a session with `configuration`.
    init(_ configuration: TraceConfiguration) {
        self.init(entries: configuration.metadata.entries, samplingProbability: configuration.samplingProbability)
    }
}
