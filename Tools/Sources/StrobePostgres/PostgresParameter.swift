/// A value bound to a statement's `$1`, `$2`, …: sent to the server apart
/// from the SQL, in PostgreSQL's text input form, so that no value is ever
/// read as SQL.
package protocol PostgresParameter {
    /// The value as PostgreSQL reads it from text; nil for NULL.
    var postgresText: String? { get }
}

extension String: PostgresParameter {
    /// The string itself.
    package var postgresText: String? { self }
}

extension Int: PostgresParameter {
    /// Decimal digits.
    package var postgresText: String? { String(self) }
}

extension Int32: PostgresParameter {
    /// Decimal digits.
    package var postgresText: String? { String(self) }
}

extension Int64: PostgresParameter {
    /// Decimal digits.
    package var postgresText: String? { String(self) }
}

extension Bool: PostgresParameter {
    /// `t` or `f`.
    package var postgresText: String? { self ? "t" : "f" }
}

extension Double: PostgresParameter {
    /// The shortest decimal that reads back as the same double, or `NaN`,
    /// `Infinity`, `-Infinity`.
    package var postgresText: String? {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return description
    }
}

extension Optional: PostgresParameter where Wrapped: PostgresParameter {
    /// NULL for nil, else the wrapped value's text.
    package var postgresText: String? { self?.postgresText }
}

/// Bytes bound to a `bytea` parameter.
package struct PostgresBytes: PostgresParameter {
    /// The bytes.
    package var bytes: [UInt8]

    /// `bytes`, as a `bytea` value.
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The hex form: `\x` and two digits a byte.
    package var postgresText: String? {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Array: PostgresParameter where Element: PostgresParameter {
    /// A one-dimensional array literal, `{"a","b",NULL}`: every element in
    /// double quotes with `"` and `\` escaped, NULL unquoted. Bind it with a
    /// cast to the array type (`$1::text[]`).
    package var postgresText: String? {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (index, element) in enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            guard let value = element.postgresText else {
                text += "NULL".utf8
                continue
            }
            text.append(quote)
            // Byte by byte: `"` and `\` never occur inside a multi-byte
            // UTF-8 sequence.
            for byte in value.utf8 {
                if byte == quote || byte == backslash { text.append(backslash) }
                text.append(byte)
            }
            text.append(quote)
        }
        text.append(UInt8(ascii: "}"))
        return String(decoding: text, as: UTF8.self)
    }
}
