/// The flight recorder and crash capture as environment variables ask for
/// them (see ``TraceSession/startFromEnvironment()``).
extension TraceConfiguration {
    /// The directory a flight recorder started from the environment dumps
    /// into; setting it turns the flight recorder on.
    package static let flightRecorderEnvironmentVariable = "STROBE_FLIGHT_RECORDER_DIR"
    /// The path crash capture writes to (see ``CrashCapture``).
    package static let crashCaptureEnvironmentVariable = "STROBE_CRASH_CAPTURE"

    /// Applies `STROBE_FLIGHT_RECORDER_*` and `STROBE_CRASH_CAPTURE`.
    mutating func applyFlightRecorderAndCrashCapture(_ environment: [String: String]) throws(TraceSessionError) {
        let prefix = "STROBE_FLIGHT_RECORDER_"
        let settings = environment.keys.filter { $0.hasPrefix(prefix) && $0 != Self.flightRecorderEnvironmentVariable }
        if let directory = environment[Self.flightRecorderEnvironmentVariable], !directory.isEmpty {
            var recorder = FlightRecorder(directory: directory)
            if let value = environment[prefix + "BEFORE"] {
                recorder.before = try Self.duration(prefix + "BEFORE", value)
            }
            if let value = environment[prefix + "AFTER"] { recorder.after = try Self.duration(prefix + "AFTER", value) }
            if let value = environment[prefix + "SPACING"] {
                recorder.minimumSpacing = try Self.duration(prefix + "SPACING", value)
            }
            if let value = environment[prefix + "MAX_FILES"] {
                recorder.maximumFiles = try Self.count(prefix + "MAX_FILES", value)
            }
            if let value = environment[prefix + "MAX_BYTES"] {
                recorder.maximumBytes = try Self.count(prefix + "MAX_BYTES", value)
            }
            if let value = environment[prefix + "TRIGGERS"] { triggers = try Self.triggers(prefix + "TRIGGERS", value) }
            let known = ["BEFORE", "AFTER", "SPACING", "MAX_FILES", "MAX_BYTES", "TRIGGERS"].map { prefix + $0 }
            if let unknown = settings.sorted().first(where: { !known.contains($0) }) {
                throw .invalidConfiguration(
                    "\(unknown): unknown; the flight recorder reads "
                        + "\(([Self.flightRecorderEnvironmentVariable] + known).joined(separator: ", "))"
                )
            }
            flightRecorder = recorder
            whenBufferFull = .overwriteOldest
        } else if let setting = settings.sorted().first {
            throw .invalidConfiguration(
                "\(setting) needs \(Self.flightRecorderEnvironmentVariable), the directory for dumps")
        }
        if let path = environment[Self.crashCaptureEnvironmentVariable], !path.isEmpty {
            crashCapture = CrashCapture(path: path)
            // Without a file to stream to, the rings are what reaches the
            // crash file.
            if outputPath == nil { whenBufferFull = .overwriteOldest }
        }
    }

    /// A duration written as a number and a unit: `ns`, `us`, `ms`, `s` or
    /// `m`, as in `500ms` or `2.5s`.
    static func duration(_ variable: String, _ text: String) throws(TraceSessionError) -> Duration {
        let trimmed = text.filter { !$0.isWhitespace }
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9)]
        for (unit, nanoseconds) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count)
            // "ms" also ends in "s": only a number before the unit counts.
            guard let value = Double(number), value.isFinite, value >= 0 else { continue }
            return .nanoseconds(Int64((value * nanoseconds).rounded()))
        }
        throw .invalidConfiguration("\(variable)=\(text): expected a duration such as 500ms, 2s or 1.5m")
    }

    static func count(_ variable: String, _ text: String) throws(TraceSessionError) -> Int {
        guard let value = Int(text.filter { !$0.isWhitespace }), value > 0 else {
            throw .invalidConfiguration("\(variable)=\(text): expected a positive whole number")
        }
        return value
    }

    /// Triggers written as `interval:NAME>DURATION`, `counter:NAME>NUMBER`
    /// or `counter:NAME<NUMBER`, comma separated.
    static func triggers(_ variable: String, _ text: String) throws(TraceSessionError) -> [Trigger] {
        var triggers: [Trigger] = []
        for item in text.split(separator: ",") {
            let entry = item.trimmingWhitespace()
            let problem = TraceSessionError.invalidConfiguration(
                "\(variable): \"\(entry)\": expected interval:NAME>DURATION, counter:NAME>NUMBER or counter:NAME<NUMBER"
            )
            if entry.hasPrefix("interval:") {
                let rest = entry.dropFirst("interval:".count)
                guard let split = rest.lastIndex(of: ">"), split != rest.startIndex else { throw problem }
                let threshold = try duration(variable, String(rest[rest.index(after: split)...]))
                triggers.append(.interval(String(rest[..<split]), longerThan: threshold))
            } else if entry.hasPrefix("counter:") {
                let rest = entry.dropFirst("counter:".count)
                guard let split = rest.lastIndex(where: { $0 == ">" || $0 == "<" }), split != rest.startIndex,
                    let threshold = Double(rest[rest.index(after: split)...]), threshold.isFinite
                else { throw problem }
                let name = String(rest[..<split])
                triggers.append(
                    rest[split] == ">" ? .counter(name, above: threshold) : .counter(name, below: threshold))
            } else {
                throw problem
            }
        }
        return triggers
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
