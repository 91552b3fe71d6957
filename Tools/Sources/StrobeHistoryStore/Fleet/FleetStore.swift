import Foundation

/// A fleet's traces in a run history's store (schema version 3,
/// ``FleetSchema``): SQLite or PostgreSQL, as ``HistoryStores`` opens them.
///
/// Adding is idempotent: a trace is keyed by the digest of its bytes, and one
/// already stored is counted and left as it is.
public protocol FleetStore: Sendable {
    /// Where the store is.
    var location: HistoryLocation { get }

    /// Stores `records` in one transaction, each trace once.
    func add(_ records: [FleetTraceRecord]) async throws -> FleetAddCounts

    /// Every session holding the metric `name` of `kind`,
    /// whose metadata has every key and value of `filters`.
    func sessions(metric name: String, kind: FleetMetricRecord.Kind, filters: [String: String]) async throws
        -> [FleetSession]

    /// The metric names stored, by kind, for messages about a name that is
    /// not there.
    func metricNames() async throws -> [(kind: FleetMetricRecord.Kind, name: String)]

    /// Traces stored.
    func traceCount() async throws -> Int

    /// Every metadata key of the stored traces, with how many distinct
    /// values it has and how many traces carry it, by key.
    func metadataKeys() async throws -> [FleetMetadataKey]

    /// Closes the store.
    func close() async
}

/// A metadata key of a fleet's traces, as `strobe history list` shows it.
public struct FleetMetadataKey: Sendable, Hashable {
    /// The key (`app.version`, `device.class`, ...).
    public var key: String
    /// Its distinct values.
    public var values: Int
    /// The traces that carry it.
    public var traces: Int
}

/// Opens fleet stores.
public enum FleetStores {
    /// Opens the store at `location` (creating and migrating it with
    /// `.readWrite`, the default): the store
    /// ``HistoryStores/open(_:access:)`` opens, seen as a fleet's.
    public static func open(_ location: HistoryLocation, access: HistoryAccess = .readWrite) async throws
        -> any FleetStore
    {
        try await HistoryStores.open(location, access: access)
    }
}

extension FleetStore {
    /// Groups rows of (trace, key, value) into each trace's metadata.
    static func metadataByTrace(_ rows: [(String, String, String)]) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (trace, key, value) in rows { result[trace, default: [:]][key] = value }
        return result
    }
}
