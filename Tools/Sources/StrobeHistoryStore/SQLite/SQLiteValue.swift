import Foundation

/// A value as SQLite stores it: one of its five storage classes.
enum SQLiteValue: Sendable, Hashable {
    /// NULL.
    case null
    /// A 64-bit signed integer (also how a `Bool` is stored: 0 or 1).
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes, stored as given.
    case blob([UInt8])

    /// The storage class's name, for errors.
    var storageClass: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}

/// A Swift value bound to a statement's `?` parameters: sent to SQLite apart
/// from the SQL, so that no value is ever read as SQL.
protocol SQLiteParameter {
    /// The value as SQLite stores it.
    var sqliteValue: SQLiteValue { get }
}

extension SQLiteValue: SQLiteParameter {
    /// The value itself.
    var sqliteValue: SQLiteValue { self }
}

extension String: SQLiteParameter {
    /// The text.
    var sqliteValue: SQLiteValue { .text(self) }
}

extension Int: SQLiteParameter {
    /// The integer.
    var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Int64: SQLiteParameter {
    /// The integer.
    var sqliteValue: SQLiteValue { .integer(self) }
}

extension Double: SQLiteParameter {
    /// The number.
    var sqliteValue: SQLiteValue { .real(self) }
}

extension Bool: SQLiteParameter {
    /// 1 for true, 0 for false: SQLite has no boolean class.
    var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
}

extension Data: SQLiteParameter {
    /// The bytes, as a blob.
    var sqliteValue: SQLiteValue { .blob([UInt8](self)) }
}

extension Array: SQLiteParameter where Element == UInt8 {
    /// The bytes, as a blob.
    var sqliteValue: SQLiteValue { .blob(self) }
}

extension Optional: SQLiteParameter where Wrapped: SQLiteParameter {
    /// NULL for nil, else the wrapped value.
    var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}
