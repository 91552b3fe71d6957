import CSQLite

/// A prepared statement: its SQL compiled once, then run with values bound
/// to its `?` parameters as many times as needed. Released, it is
/// finalized.
///
/// It belongs to its connection's thread of the moment, as the connection
/// does.
final class SQLiteStatement {
    /// SQLite's handle.
    private let handle: OpaquePointer
    /// The SQL, for errors.
    let sql: String

    /// Compiles `sql`, one statement, on `connection`.
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message when the SQL does not
    ///   compile, or when it holds more than one statement.
    init(_ sql: String, on connection: OpaquePointer) throws(SQLiteError) {
        var prepared: OpaquePointer?
        var rest: UnsafePointer<CChar>?
        var followedByMore = false
        let code = sql.withCString { text in
            let code = sqlite3_prepare_v2(connection, text, -1, &prepared, &rest)
            // What follows the first statement: only blanks and semicolons may.
            if let rest { followedByMore = !String(cString: rest).allSatisfy { $0.isWhitespace || $0 == ";" } }
            return code
        }
        guard code == SQLITE_OK, let prepared, !followedByMore else {
            sqlite3_finalize(prepared)
            if code != SQLITE_OK { throw SQLiteError(code: code, on: connection) }
            if followedByMore { throw SQLiteError("more than one statement in one: \(sql)") }
            throw SQLiteError("no statement in: \(sql)")
        }
        handle = prepared
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The error for `code`, with the connection's message.
    private func failure(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, on: sqlite3_db_handle(handle))
    }

    /// Resets the statement and binds `arguments` to its parameters, in
    /// order; copies of them (`SQLITE_TRANSIENT`), so nothing need outlive
    /// the call.
    ///
    /// - Throws: ``SQLiteError`` when the count differs from the
    ///   statement's parameters, or SQLite refuses a value (too big).
    func bind(_ arguments: [any SQLiteParameter]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw SQLiteError("\(arguments.count) values for the \(expected) parameters of \(sql)")
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument.sqliteValue {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let value): code = sqlite3_bind_int64(handle, index, value)
            case .real(let value): code = sqlite3_bind_double(handle, index, value)
            case .text(let text):
                var text = text
                code = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        guard let count = Int32(exactly: characters.count) else { return SQLITE_TOOBIG }
                        return strobe_sqlite3_bind_text_copy(handle, index, characters.baseAddress, count)
                    }
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { buffer in
                    guard let count = Int32(exactly: buffer.count) else { return SQLITE_TOOBIG }
                    return strobe_sqlite3_bind_blob_copy(handle, index, buffer.baseAddress, count)
                }
            }
            guard code == SQLITE_OK else { throw failure(code) }
        }
    }

    /// Runs the statement with `arguments` to its end, ignoring any rows
    /// (`PRAGMA journal_mode` answers with one).
    ///
    /// - Throws: ``SQLiteError`` with SQLite's message: a constraint
    ///   failed, the database is read-only, busy beyond the timeout, ….
    func execute(_ arguments: [any SQLiteParameter] = []) throws(SQLiteError) {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Runs the query with `arguments`, calling `body` with each row as it
    /// comes, so that a large result is never held whole.
    ///
    /// - Throws: ``SQLiteError`` when the query fails, or what `body`
    ///   throws, which ends the query.
    func forEachRow(_ arguments: [any SQLiteParameter] = [], _ body: (SQLiteRow) throws -> Void) throws {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        let columns = columnNames()
        while try step() { try body(currentRow(columns)) }
    }

    /// Every row of the query with `arguments`.
    ///
    /// - Throws: ``SQLiteError`` when the query fails.
    func rows(_ arguments: [any SQLiteParameter] = []) throws(SQLiteError) -> [SQLiteRow] {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        let columns = columnNames()
        var rows: [SQLiteRow] = []
        while try step() { rows.append(currentRow(columns)) }
        return rows
    }

    /// The first row of the query with `arguments`, or nil when it has none.
    ///
    /// - Throws: ``SQLiteError`` when the query fails.
    func firstRow(_ arguments: [any SQLiteParameter] = []) throws(SQLiteError) -> SQLiteRow? {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        return try step() ? currentRow(columnNames()) : nil
    }

    /// Moves to the next row: true when there is one, false at the end.
    private func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw failure(code)
        }
    }

    /// The names of the result's columns, in order.
    private func columnNames() -> [String] {
        (0..<sqlite3_column_count(handle)).map { column in
            sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "\(column + 1)"
        }
    }

    /// The row the statement is on, its values copied.
    private func currentRow(_ columns: [String]) -> SQLiteRow {
        SQLiteRow(columns: columns, values: (0..<Int32(columns.count)).map(value(of:)))
    }

    /// The value of `column` in the current row, copied.
    private func value(of column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // The text first, then its length in bytes (SQLite's order).
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            // An empty blob has no pointer.
            guard let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }
}
