/// Where a trace comes from: the metadata its session was configured with
/// (`TraceConfiguration.metadata` in the SDK) and the sampling probability
/// that admitted the session.
///
/// The SDK writes it as an instant named `strobe.metadata` on the process
/// track whose debug annotations are the values (see `TraceMetadata` in the
/// SDK); ``ParsedTrace/origin`` reads it back.
public struct TraceOrigin: Sendable, Hashable, Codable {
    /// Every value by its name in the trace: `app.name`, `app.version`,
    /// `app.build`, `device.model`, `os.version` and the app's own dimensions.
    public var values: [String: String]
    /// The chance that a session was recorded at all, from 0 to 1; nil when
    /// the trace does not say.
    public var samplingProbability: Double?

    /// An origin with these values.
    public init(values: [String: String], samplingProbability: Double?) {
        self.values = values
        self.samplingProbability = samplingProbability
    }

    /// The name of the instant that carries the metadata.
    public static let eventName = "strobe.metadata"
    /// The annotation that carries the sampling probability.
    public static let samplingProbabilityName = "sampling.probability"

    /// The app's name.
    public var appName: String? { values["app.name"] }
    /// The app's version.
    public var appVersion: String? { values["app.version"] }
    /// The app's build.
    public var build: String? { values["app.build"] }
    /// The device's model.
    public var deviceModel: String? { values["device.model"] }
    /// The operating system's version.
    public var osVersion: String? { values["os.version"] }

    /// The origin carried by `instant`, or nil when it is not a
    /// `strobe.metadata` instant.
    public init?(_ instant: Instant) {
        guard instant.name == Self.eventName else { return nil }
        var values: [String: String] = [:]
        var probability: Double?
        for (name, value) in instant.arguments {
            if name == Self.samplingProbabilityName {
                probability = value.number
            } else {
                values[name] = value.description
            }
        }
        self.init(values: values, samplingProbability: probability)
    }
}

extension ParsedTrace {
    /// Where the trace comes from, when its session recorded metadata: the
    /// first `strobe.metadata` instant.
    public var origin: TraceOrigin? {
        instants.lazy.compactMap(TraceOrigin.init).first
    }
}
