import CSQLite

/// A connection to an SQLite database file through SQLite's C API, with the
/// statements it keeps prepared.
///
/// Opened in SQLite's multi-thread mode: a connection and its statements
/// belong to one thread at a time, which its owner guarantees (the run
/// history's store holds it in a mutex). Released, it finalizes its
/// statements and closes.
final class SQLiteConnection {
    /// SQLite's handle.
    private let handle: OpaquePointer
    /// Whether the file was opened read-only (`SQLITE_OPEN_READONLY`).
    let isReadOnly: Bool
    /// The statements ``cachedStatement(_:)`` prepared, by SQL.
    private var cache: [String: SQLiteStatement] = [:]

    /// Opens the database at `path`: read-only (never creating it) when
    /// `readOnly`, else for reading and writing, created when missing.
    ///
    /// The connection reports extended result codes, refuses string
    /// literals in double quotes, and waits up to `busyTimeout` for a lock
    /// another connection holds. It reads the schema once, so that a file
    /// that is not a database is refused here rather than at its first
    /// statement.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message: the file cannot be
    ///   opened, or is not a database ("file is not a database").
    init(path: String, readOnly: Bool, busyTimeout: Duration) throws(SQLiteError) {
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard let opened else { throw SQLiteError(SQLiteError.text(of: code), code: code) }
        guard code == SQLITE_OK else {
            let error = SQLiteError(code: code, on: opened)
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        isReadOnly = readOnly
        // From here on, a failure releases the connection, which closes it.
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = (busyTimeout / .milliseconds(1)).rounded()
        sqlite3_busy_timeout(handle, milliseconds < Double(Int32.max) ? Int32(max(milliseconds, 0)) : Int32.max)
        let refused = strobe_sqlite3_refuse_double_quoted_strings(handle)
        guard refused == SQLITE_OK else { throw SQLiteError(code: refused, on: handle) }
        _ = try SQLiteStatement("SELECT * FROM sqlite_master LIMIT 1", on: handle).firstRow()
    }

    deinit {
        // Every statement first: a connection closes once its last one is
        // finalized.
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// A new statement for `sql`, one statement, finalized when released.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message when it does not
    ///   compile.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(sql, on: handle)
    }

    /// The statement for `sql`, prepared on its first use and kept for the
    /// connection's life, so that a loop of inserts compiles its SQL once.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message when it does not
    ///   compile.
    func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = cache[sql] { return statement }
        let statement = try prepare(sql)
        cache[sql] = statement
        return statement
    }

    /// Runs `sql`, one statement, with `arguments` bound to its `?`
    /// parameters, ignoring any rows.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message.
    func execute(_ sql: String, _ arguments: [any SQLiteParameter] = []) throws(SQLiteError) {
        try prepare(sql).execute(arguments)
    }

    /// Every row of the query `sql` with `arguments`.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message.
    func rows(_ sql: String, _ arguments: [any SQLiteParameter] = []) throws(SQLiteError) -> [SQLiteRow] {
        try prepare(sql).rows(arguments)
    }

    /// The first column of the first row of the query `sql` with
    /// `arguments`, as `type`; nil when there is no row or the value is
    /// NULL.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message, or when the value is
    ///   not one `type` reads.
    func value<Value: SQLiteColumnValue>(
        _ sql: String, _ arguments: [any SQLiteParameter] = [], as type: Value.Type = Value.self
    ) throws(SQLiteError) -> Value? {
        try prepare(sql).firstRow(arguments)?.value(0, as: Value?.self) ?? nil
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed
    /// (`sqlite3_changes64`): 0 after an insert that `ON CONFLICT DO
    /// NOTHING` skipped.
    var changes: Int64 { sqlite3_changes64(handle) }

    /// Whether a table named `name` exists.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message.
    func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [name], as: Int.self)
            != nil
    }

    /// Runs `body` in a write transaction and commits it, returning what it
    /// returns; rolls back when it throws, and rethrows.
    ///
    /// The transaction is IMMEDIATE: it takes the write lock as it begins,
    /// where the busy timeout waits for another writer to finish, never
    /// later on turning a read lock into a write lock, where SQLite answers
    /// busy at once. On a read-only connection, where SQLite refuses an
    /// IMMEDIATE transaction, it is DEFERRED, so that its first write is
    /// what SQLite refuses ("attempt to write a readonly database").
    func writeTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try transaction(begin: isReadOnly ? "BEGIN DEFERRED TRANSACTION" : "BEGIN IMMEDIATE TRANSACTION", body)
    }

    /// Runs `body` in a read transaction, whose statements all see one
    /// snapshot of the database (DEFERRED: the snapshot is taken at the
    /// first read), with writes refused (`PRAGMA query_only`) until it ends;
    /// rolls back when it throws, and rethrows.
    func readTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        // A connection opened read-only refuses writes already.
        guard !isReadOnly else { return try transaction(begin: "BEGIN DEFERRED TRANSACTION", body) }
        try cachedStatement("PRAGMA query_only = 1").execute()
        defer { try? cachedStatement("PRAGMA query_only = 0").execute() }
        return try transaction(begin: "BEGIN DEFERRED TRANSACTION", body)
    }

    /// Begins a transaction with `begin`, runs `body`, and commits, or rolls
    /// back when `body` or the commit throws.
    private func transaction<Result>(begin: String, _ body: () throws -> Result) throws -> Result {
        try cachedStatement(begin).execute()
        do {
            let result = try body()
            try cachedStatement("COMMIT TRANSACTION").execute()
            return result
        } catch {
            rollback()
            throw error
        }
    }

    /// Rolls back the open transaction, unless SQLite already did (after
    /// some errors it rolls back by itself). Its own failure is ignored: the
    /// error that caused it is the one to report.
    private func rollback() {
        guard sqlite3_get_autocommit(handle) == 0 else { return }
        try? cachedStatement("ROLLBACK TRANSACTION").execute()
    }
}
