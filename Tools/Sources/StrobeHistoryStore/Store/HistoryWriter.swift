import StrobeHistory

/// Adds runs to a history, checking first that their units agree with
/// each other and with what the history holds, so that a conflict stores
/// nothing of the runs given.
public enum HistoryWriter {
    /// What an add did.
    public struct Counts: Sendable, Hashable, CustomStringConvertible {
        /// Runs stored now.
        public var added = 0
        /// Runs that were stored already (or given twice), left as they were.
        public var alreadyStored = 0

        /// No runs.
        public init() {}

        /// `N added, M already stored`.
        public var description: String { "\(added) added, \(alreadyStored) already stored" }
    }

    /// Adds each record in a transaction of its own; a record whose key is
    /// stored already is counted, not stored again.
    ///
    /// - Throws: ``HistoryError`` of kind ``HistoryError/Kind/unitChanged``
    ///   before anything is stored when a metric's unit differs between two
    ///   of the records, or from the unit stored for it, naming both units
    ///   and both runs; database failures as the store reports them (the
    ///   runs added before stay added).
    public static func add(_ records: [RunRecord], to store: any HistoryStore) async throws -> Counts {
        for record in records {
            if let conflict = record.internalUnitConflict { throw conflict }
        }
        // Against the store first: the run stored earlier is the one to name.
        var storedUnits: [String: [MetricName: StoredUnit]] = [:]
        for suite in Set(records.map(\.run.metadata.suite)).sorted() {
            storedUnits[suite] = Dictionary(
                try await store.units(suite: suite).map { (MetricName(test: $0.test, metric: $0.metric), $0) },
                uniquingKeysWith: { first, _ in first })
        }
        var seen: [String: [MetricName: StoredUnit]] = [:]
        for record in records {
            let suite = record.run.metadata.suite
            for unit in record.units {
                let name = MetricName(test: unit.test, metric: unit.metric)
                if let stored = storedUnits[suite]?[name], stored.unit != unit.unit {
                    throw stored.conflict(with: record, unit: unit.unit)
                }
                if let earlier = seen[suite]?[name] {
                    if earlier.unit != unit.unit {
                        throw earlier.conflict(with: record, unit: unit.unit, stored: false)
                    }
                } else {
                    seen[suite, default: [:]][name] = StoredUnit(
                        test: unit.test, metric: unit.metric, unit: unit.unit, firstRun: record.key)
                }
            }
        }
        var counts = Counts()
        for record in records {
            switch try await store.add(record) {
            case .added: counts.added += 1
            case .alreadyStored: counts.alreadyStored += 1
            }
        }
        return counts
    }
}
