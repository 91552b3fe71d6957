import Foundation

/// A Swift type a result column is read as.
protocol SQLiteColumnValue {
    /// What the type reads, for errors: "text", "an integer", ….
    static var expected: String { get }

    /// The value `stored` holds; nil when it is of a storage class this type
    /// does not read (NULL, unless the type is an optional).
    static func read(_ stored: SQLiteValue) -> Self?
}

extension String: SQLiteColumnValue {
    /// Text only.
    static var expected: String { "text" }

    /// The text.
    static func read(_ stored: SQLiteValue) -> String? {
        guard case .text(let text) = stored else { return nil }
        return text
    }
}

extension Int64: SQLiteColumnValue {
    /// An integer, or a real that is a whole number.
    static var expected: String { "an integer" }

    /// The integer.
    static func read(_ stored: SQLiteValue) -> Int64? {
        switch stored {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }
}

extension Int: SQLiteColumnValue {
    /// An integer, or a real that is a whole number.
    static var expected: String { "an integer" }

    /// The integer, when it fits.
    static func read(_ stored: SQLiteValue) -> Int? {
        Int64.read(stored).flatMap { Int(exactly: $0) }
    }
}

extension Double: SQLiteColumnValue {
    /// A real or an integer.
    static var expected: String { "a number" }

    /// The number.
    static func read(_ stored: SQLiteValue) -> Double? {
        switch stored {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
}

extension Bool: SQLiteColumnValue {
    /// An integer, true unless 0.
    static var expected: String { "an integer (a boolean)" }

    /// False for 0, true for any other number.
    static func read(_ stored: SQLiteValue) -> Bool? {
        switch stored {
        case .integer(let value): value != 0
        case .real(let value): value != 0
        default: nil
        }
    }
}

extension Array: SQLiteColumnValue where Element == UInt8 {
    /// A blob, or text as its UTF-8 bytes.
    static var expected: String { "a blob" }

    /// The bytes.
    static func read(_ stored: SQLiteValue) -> [UInt8]? {
        switch stored {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        default: nil
        }
    }
}

extension Data: SQLiteColumnValue {
    /// A blob, or text as its UTF-8 bytes.
    static var expected: String { "a blob" }

    /// The bytes.
    static func read(_ stored: SQLiteValue) -> Data? {
        [UInt8].read(stored).map { Data($0) }
    }
}

extension Optional: SQLiteColumnValue where Wrapped: SQLiteColumnValue {
    /// What the wrapped type reads, or NULL.
    static var expected: String { Wrapped.expected + " or NULL" }

    /// `.some(nil)` for NULL, else the wrapped type's reading.
    static func read(_ stored: SQLiteValue) -> Wrapped?? {
        if case .null = stored { return .some(nil) }
        return Wrapped.read(stored).map { .some($0) }
    }
}
