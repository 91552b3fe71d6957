/// A Swift type a result column is read as, from the binary form the server
/// sends it in.
package protocol PostgresColumnValue {
    /// The PostgreSQL types it is read from, for errors: `int4`, `text`, ….
    static var postgresTypes: String { get }

    /// The value of `bytes`, a column of type `type` (an OID); nil when the
    /// column is of another type or its bytes are not of that type's size.
    static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Self?

    /// What NULL reads as; nil when this type cannot hold NULL.
    static var null: Self? { get }
}

extension PostgresColumnValue {
    /// Only optionals hold NULL.
    package static var null: Self? { nil }
}

/// The OIDs of the built-in types read here (`pg_type.oid`, fixed).
enum PostgresType {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043

    /// The big-endian integer of `bytes`, when it has `size` of them.
    static func integer(_ bytes: UnsafeRawBufferPointer, size: Int) -> Int64? {
        guard bytes.count == size else { return nil }
        switch size {
        case 2: return Int64(Int16(bigEndian: bytes.loadUnaligned(as: Int16.self)))
        case 4: return Int64(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self)))
        case 8: return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
        default: return nil
        }
    }

    /// The integer of an `int2`, `int4` or `int8` column.
    static func anyInteger(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Int64? {
        switch type {
        case int2: return integer(bytes, size: 2)
        case int4: return integer(bytes, size: 4)
        case int8: return integer(bytes, size: 8)
        default: return nil
        }
    }
}

extension String: PostgresColumnValue {
    /// `text`, `varchar`, `char` or `name`.
    package static var postgresTypes: String { "text, varchar, char or name" }

    /// The UTF-8 text (the connection's client encoding).
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> String? {
        guard [PostgresType.text, PostgresType.varchar, PostgresType.bpchar, PostgresType.name].contains(type) else {
            return nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Int64: PostgresColumnValue {
    /// Any integer type.
    package static var postgresTypes: String { "int2, int4 or int8" }

    /// The integer.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Int64? {
        PostgresType.anyInteger(bytes, type: type)
    }
}

extension Int: PostgresColumnValue {
    /// Any integer type.
    package static var postgresTypes: String { "int2, int4 or int8" }

    /// The integer.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Int? {
        PostgresType.anyInteger(bytes, type: type).flatMap { Int(exactly: $0) }
    }
}

extension Int32: PostgresColumnValue {
    /// `int2` or `int4`.
    package static var postgresTypes: String { "int2 or int4" }

    /// The integer.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Int32? {
        guard type != PostgresType.int8 else { return nil }
        return PostgresType.anyInteger(bytes, type: type).flatMap { Int32(exactly: $0) }
    }
}

extension Bool: PostgresColumnValue {
    /// `bool`.
    package static var postgresTypes: String { "bool" }

    /// The truth value.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Bool? {
        guard type == PostgresType.bool, bytes.count == 1 else { return nil }
        return bytes[0] != 0
    }
}

extension Double: PostgresColumnValue {
    /// `float8` or `float4`.
    package static var postgresTypes: String { "float8 or float4" }

    /// The number.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Double? {
        switch (type, bytes.count) {
        case (PostgresType.float8, 8):
            return Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
        case (PostgresType.float4, 4):
            return Double(Float(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self))))
        default: return nil
        }
    }
}

extension Array: PostgresColumnValue where Element == UInt8 {
    /// `bytea`.
    package static var postgresTypes: String { "bytea" }

    /// The bytes.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> [UInt8]? {
        guard type == PostgresType.bytea else { return nil }
        return Array(bytes)
    }
}

extension Optional: PostgresColumnValue where Wrapped: PostgresColumnValue {
    /// The wrapped type's.
    package static var postgresTypes: String { Wrapped.postgresTypes }

    /// The wrapped value.
    package static func decode(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> Wrapped?? {
        Wrapped.decode(bytes, type: type).map { .some($0) }
    }

    /// NULL reads as nil.
    package static var null: Wrapped?? { .some(nil) }
}
