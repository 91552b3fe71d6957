/// One row of a query's result, its values copied out of the statement, so
/// that it stays valid after the statement moves on.
struct SQLiteRow {
    /// The columns' names, in order (shared by every row of a result).
    let columns: [String]
    /// The values, one per column.
    let values: [SQLiteValue]

    /// The value of column `column` (from 0), as `type`.
    ///
    /// - Throws: ``SQLiteError`` naming the column, when the row has no such
    ///   column or its value is not one `type` reads (NULL where the type is
    ///   not an optional, text where a number is expected).
    func value<Value: SQLiteColumnValue>(_ column: Int, as type: Value.Type = Value.self) throws(SQLiteError)
        -> Value
    {
        guard values.indices.contains(column) else {
            throw SQLiteError("the result has \(values.count) columns, not a column \(column + 1)")
        }
        let stored = values[column]
        guard let value = Value.read(stored) else {
            throw SQLiteError("column \(columns[column]) holds \(stored.storageClass), not \(Value.expected)")
        }
        return value
    }
}
