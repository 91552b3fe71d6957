import CLibPQ

/// The rows a statement returned, every column in the binary form the
/// server sends, read as the Swift type asked for.
package final class PostgresResult {
    private let result: OpaquePointer

    /// Takes ownership of `result` (cleared when this is released).
    init(_ result: OpaquePointer) {
        self.result = result
    }

    deinit {
        PQclear(result)
    }

    /// The number of rows.
    package var rowCount: Int { Int(PQntuples(result)) }

    /// The number of columns.
    package var columnCount: Int { Int(PQnfields(result)) }

    /// The column's name, as the statement gave it.
    package func columnName(_ column: Int) -> String {
        PQfname(result, Int32(column)).map { String(cString: $0) } ?? "?"
    }

    /// The value at `row` and `column` (both from 0) as `type`.
    ///
    /// - Throws: ``PostgresError`` naming the column when it is out of
    ///   range, NULL and `type` is not optional, or of a PostgreSQL type
    ///   that `type` is not read from.
    package func value<Value: PostgresColumnValue>(
        _ row: Int, _ column: Int, as type: Value.Type = Value.self
    ) throws(PostgresError) -> Value {
        guard (0..<rowCount).contains(row), (0..<columnCount).contains(column) else {
            throw PostgresError(
                "no row \(row), column \(column) in a result of \(rowCount) rows and \(columnCount) columns")
        }
        let (row32, column32) = (Int32(row), Int32(column))
        if PQgetisnull(result, row32, column32) != 0 {
            guard let null = Value.null else {
                throw PostgresError("column \(column) (\(columnName(column))) of row \(row) is NULL")
            }
            return null
        }
        let columnType = PQftype(result, column32)
        let bytes = UnsafeRawBufferPointer(
            start: PQgetvalue(result, row32, column32), count: Int(PQgetlength(result, row32, column32)))
        guard let value = Value.decode(bytes, type: columnType) else {
            throw PostgresError(
                "column \(column) (\(columnName(column))) is of type OID \(columnType) with \(bytes.count) bytes, not "
                    + "\(Value.postgresTypes)"
            )
        }
        return value
    }
}
