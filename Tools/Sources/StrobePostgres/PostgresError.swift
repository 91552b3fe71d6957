import Foundation

/// Why libpq could not connect, or why the server refused a statement.
package struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What libpq or the server said, on one line.
    package var message: String
    /// The statement's SQLSTATE code (`40001` for a serialization failure,
    /// say), when the server sent one.
    package var sqlState: String?

    /// An error saying `message` (its lines joined), with its SQLSTATE when
    /// known.
    package init(_ message: String, sqlState: String? = nil) {
        // libpq ends its messages with a newline and puts hints on lines
        // of their own.
        self.message = message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
        self.sqlState = sqlState
    }

    /// The message, then the SQLSTATE in parentheses.
    package var description: String { message + (sqlState.map { " (SQLSTATE \($0))" } ?? "") }
}
