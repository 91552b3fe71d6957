import Logging
import Synchronization

/// What swift-otel's batch span processor reports through its diagnostic
/// logger: the spans of every batch it exported (`batch_size` on each
/// "Exported batch." message), the spans it dropped because its queue was
/// full (`dropped_count`), and any warning or error, so that the comparison
/// can check that every span it made was processed.
final class ExportTally: Sendable {
    /// Totals so far.
    struct Counts: Sendable {
        var exportedSpans = 0
        var exportedBatches = 0
        var droppedSpans = 0
        var problems: [String] = []
    }

    private let counts = Mutex(Counts())

    /// The totals at this moment.
    var current: Counts { counts.withLock { $0 } }

    /// A logger at debug level whose messages are tallied.
    func makeLogger() -> Logger {
        var logger = Logger(label: "swift-otel") { label in TallyingLogHandler(tally: self) }
        logger.logLevel = .debug
        return logger
    }

    fileprivate func record(_ event: LogEvent, handlerMetadata: Logger.Metadata) {
        var metadata = handlerMetadata
        if let own = event.metadata { metadata.merge(own) { _, new in new } }
        counts.withLock { counts in
            if event.message.description == "Exported batch." {
                counts.exportedBatches += 1
                counts.exportedSpans += Self.integer(metadata["batch_size"]) ?? 0
            }
            if let dropped = Self.integer(metadata["dropped_count"]) {
                counts.droppedSpans += dropped
            }
            if event.level >= .warning {
                counts.problems.append("\(event.level): \(event.message) \(metadata)")
            }
        }
    }

    private static func integer(_ value: Logger.MetadataValue?) -> Int? {
        guard case .string(let text) = value else { return nil }
        return Int(text)
    }
}

/// Hands every message at or above its level to an ``ExportTally``.
private struct TallyingLogHandler: LogHandler {
    let tally: ExportTally
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        tally.record(event, handlerMetadata: metadata)
    }
}
