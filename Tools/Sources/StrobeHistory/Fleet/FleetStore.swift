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

    /// Closes the store.
    func close() async
}

/// Opens fleet stores.
public enum FleetStores {
    /// Opens the store at `location`, creating and migrating it: the store
    /// ``HistoryStores/open(_:)`` opens, seen as a fleet's.
    public static func open(_ location: HistoryLocation) async throws -> any FleetStore {
        try await HistoryStores.open(location)
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
