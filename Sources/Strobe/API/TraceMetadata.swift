import CProtobufC
import PerfettoWire
import StrobeEncoding
import StrobeProtos

/// Where a trace comes from: the app, its version and build, the device and
/// its OS, and any other dimension the app wants its traces grouped by.
///
/// Set it on ``TraceConfiguration/metadata``; every trace of the session
/// carries it, and so do flight-recorder dumps and crash files, with the
/// ``TraceConfiguration/samplingProbability`` that admitted the session.
/// The tools group traces from a fleet by these values (`strobe ingest`,
/// `strobe fleet`).
///
/// ```swift
/// configuration.metadata = TraceMetadata(
///     appName: "Lens", appVersion: "5.2", build: "5201",
///     deviceModel: "iPhone15,2", osVersion: "18.1",
///     dimensions: ["device.class": "mid"])
/// ```
///
/// In the trace it is an instant event named `strobe.metadata` on the
/// process track, at the start of the recording, whose debug annotations are
/// the values: `app.name`, `app.version`, `app.build`, `device.model`,
/// `os.version`, each dimension under its own name (strings), and
/// `sampling.probability` (a double). A session with no metadata and a
/// sampling probability of 1 writes no such event, so a trace without one
/// reads as exactly that. Perfetto's own schema has no field for
/// an app's free-form key–value metadata (`SystemInfo` holds fixed Android and
/// kernel fields; Chrome's metadata packets are Chrome's), while debug
/// annotations are typed, take any name, and reach every Perfetto tool: the
/// UI shows them on the event and trace processor puts them in its `args`
/// table.
public struct TraceMetadata: Sendable, Hashable {
    /// The app's name.
    public var appName: String?
    /// The app's version, such as `5.2`.
    public var appVersion: String?
    /// The app's build number.
    public var build: String?
    /// The device's model, such as `iPhone15,2`.
    public var deviceModel: String?
    /// The operating system's version.
    public var osVersion: String?
    /// Further dimensions by name, such as `device.class` or `country`. A name
    /// may not be empty nor a name the fields above are written under
    /// (`app.name`, `app.version`, `app.build`, `device.model`,
    /// `os.version`) or `sampling.probability`.
    public var dimensions: [String: String]

    /// Metadata with these values; all are optional.
    public init(
        appName: String? = nil, appVersion: String? = nil, build: String? = nil, deviceModel: String? = nil,
        osVersion: String? = nil, dimensions: [String: String] = [:]
    ) {
        self.appName = appName
        self.appVersion = appVersion
        self.build = build
        self.deviceModel = deviceModel
        self.osVersion = osVersion
        self.dimensions = dimensions
    }

    /// The name of the instant event that carries the metadata.
    package static let eventName = SessionMetadata.eventName
    /// The annotation that carries the sampling probability.
    package static let samplingProbabilityName = SessionMetadata.samplingProbabilityName
    /// The names the fixed fields and the sampling probability are written
    /// under, which ``dimensions`` may not use.
    package static let reservedNames: Set<String> = [
        "app.name", "app.version", "app.build", "device.model", "os.version", samplingProbabilityName,
    ]

    /// Every value that is set, by its name in the trace, sorted by name.
    var entries: [(name: String, value: String)] {
        let fixed: [(String, String?)] = [
            ("app.name", appName), ("app.version", appVersion), ("app.build", build),
            ("device.model", deviceModel), ("os.version", osVersion),
        ]
        let all =
            fixed.compactMap { name, value in value.map { (name: name, value: $0) } }
            + dimensions.map { (name: $0.key, value: $0.value) }
        return all.sorted { $0.name < $1.name }
    }

    /// What is wrong with the dimensions' names, or nil.
    var problem: String? {
        for name in dimensions.keys.sorted() {
            if name.isEmpty { return "metadata: a dimension has an empty name" }
            if Self.reservedNames.contains(name) {
                return "metadata: dimension \"\(name)\" uses a reserved name; set the field of that name instead"
            }
            if name.utf8.contains(0) { return "metadata: dimension \"\(name)\" has a NUL byte in its name" }
        }
        for (name, value) in entries where value.utf8.contains(0) {
            return "metadata: the value of \"\(name)\" has a NUL byte"
        }
        return nil
    }
}

extension TraceMetadata {
    /// The environment variable that gives a session started by
    /// ``TraceSession/startFromEnvironment()`` its metadata.
    package static let environmentVariable = "STROBE_TRACE_METADATA"

    /// Metadata from `KEY=VALUE,KEY=VALUE`: the fixed fields by their names
    /// in the trace, any other key a dimension.
    init(environmentValue list: String) throws(TraceSessionError) {
        self.init()
        for pair in list.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0].drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
            guard parts.count == 2, !key.isEmpty else {
                throw .invalidConfiguration("\(Self.environmentVariable)=\(list): \"\(pair)\" is not KEY=VALUE")
            }
            let value = String(parts[1])
            switch key {
            case "app.name": appName = value
            case "app.version": appVersion = value
            case "app.build": build = value
            case "device.model": deviceModel = value
            case "os.version": osVersion = value
            default: dimensions[key] = value
            }
        }
        if let problem { throw .invalidConfiguration("\(Self.environmentVariable)=\(list): \(problem)") }
    }
}
