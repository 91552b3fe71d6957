import Foundation
import StrobeHistory

/// A run history: where runs are added, once each, and read back.
///
/// Each run is added in a transaction of its own, so that a writer that is
/// killed leaves none of it behind; a run already stored (same key) is left
/// as it is. One store value serves one task at a time: open one per
/// concurrent writer.
public protocol HistoryStore: Sendable {
    /// Where the store is.
    var location: HistoryLocation { get }

    /// Adds `record` in one transaction, unless a run with its key is
    /// stored already.
    ///
    /// - Throws: ``HistoryError`` of kind ``HistoryError/Kind/unitChanged``
    ///   when one of its metrics has another unit than earlier runs of the
    ///   suite stored (nothing of the run is stored then), or when the
    ///   database fails.
    func add(_ record: RunRecord) async throws -> AddOutcome

    /// The unit stored for each metric of `suite`, with the run that first
    /// stored it.
    func units(suite: String) async throws -> [StoredUnit]

    /// The runs that meet `query`, oldest first (by timestamp, then key),
    /// each with its tests and metrics: a query per table, whatever the
    /// number of runs.
    func runs(_ query: HistoryQuery) async throws -> [HistoryRun]

    /// The number of runs stored.
    func count() async throws -> Int

    /// Stores `mark`, replacing an earlier mark of the same target and series.
    func addMark(_ mark: HistoryMark) async throws

    /// Every mark stored, oldest first.
    func marks() async throws -> [HistoryMark]

    /// Closes the connection.
    func close() async
}

/// What adding a run did.
public enum AddOutcome: Sendable, Hashable {
    /// The run was stored.
    case added
    /// A run with its key was stored already; nothing changed.
    case alreadyStored
}

/// The unit a history holds for a metric of a suite.
public struct StoredUnit: Sendable, Hashable {
    /// The test.
    public var test: String
    /// The metric.
    public var metric: String
    /// Its unit.
    public var unit: String
    /// The key of the run that stored it first.
    public var firstRun: String

    /// The error for `record`, whose metric has `unit`, not this one;
    /// `stored` says whether this unit is in the store or only in another
    /// run being added with it.
    func conflict(with record: RunRecord, unit: String, stored: Bool = true) -> HistoryError {
        HistoryError(
            .unitChanged,
            "metric \(test)/\(metric) of suite \(record.run.metadata.suite) is in \(unit) in run \(record.key) but in "
                + "\(self.unit) in run \(firstRun)"
                + (stored ? ", stored before" : ", added with it")
                + "; a metric keeps its unit (give the new one another name)")
    }
}

/// Opens stores.
public enum HistoryStores {
    /// Opens the store at `location`: one connection that holds both the
    /// run history and a fleet's traces.
    ///
    /// With `.readWrite` (the default) the store is created when needed and
    /// its tables brought to ``HistorySchema/currentVersion``; with
    /// `.readOnly` it must exist at that version, and nothing is written.
    ///
    /// - Throws: ``HistoryError``: a server that cannot be reached (within
    ///   the location's connect timeout) or refuses the login, a store of a
    ///   newer schema version, a file that is not an SQLite database; for a
    ///   read, a missing store or one of an older version.
    public static func open(_ location: HistoryLocation, access: HistoryAccess = .readWrite) async throws
        -> any HistoryStore & FleetStore
    {
        switch location {
        case .sqlite(let path): return try SQLiteHistoryStore(path: path, access: access)
        case .postgres(let postgres): return try await PostgresHistoryStore.connect(postgres, access: access)
        }
    }
}

/// A test hook: with `STROBE_HISTORY_TEST_PAUSE_FILE=PATH` in the
/// environment, a writer creates PATH once it has stored part of a run
/// inside its transaction, then waits there forever, so that a test can
/// kill it at that point.
enum TestPause {
    static let path = ProcessInfo.processInfo.environment["STROBE_HISTORY_TEST_PAUSE_FILE"]

    /// Creates the file and waits for good when the hook is set; returns
    /// at once otherwise.
    static func pauseIfAsked() {
        guard let path else { return }
        _ = FileManager.default.createFile(atPath: path, contents: Data("paused\n".utf8))
        while true { sleep(60) }
    }
}
