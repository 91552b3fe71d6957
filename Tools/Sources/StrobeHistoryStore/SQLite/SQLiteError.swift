import CSQLite

/// Why SQLite refused to open a database or to run a statement.
struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's message (`sqlite3_errmsg`), or the wrapper's own when the
    /// refusal is not SQLite's.
    var message: String
    /// SQLite's extended result code (`SQLITE_CONSTRAINT_UNIQUE`, say);
    /// `SQLITE_MISUSE` for the wrapper's own refusals.
    var code: Int32

    /// An error saying `message`, for the result code `code`.
    init(_ message: String, code: Int32 = SQLITE_MISUSE) {
        self.message = message
        self.code = code
    }

    /// The error `code` stands for on `connection`: the connection's
    /// message when it has one for it, else SQLite's text for the code.
    init(code: Int32, on connection: OpaquePointer?) {
        let text = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        // sqlite3_errmsg says "not an error" once a later call succeeded.
        if let text, sqlite3_errcode(connection) != SQLITE_OK {
            self.init(text, code: code)
        } else {
            self.init(Self.text(of: code), code: code)
        }
    }

    /// SQLite's English text for a result code (`sqlite3_errstr`).
    static func text(of code: Int32) -> String {
        sqlite3_errstr(code).map { String(cString: $0) } ?? "SQLite error \(code)"
    }

    /// The error of a connection used after it was closed.
    static let closed = SQLiteError("the connection is closed")

    /// SQLite's message.
    var description: String { message }
}
