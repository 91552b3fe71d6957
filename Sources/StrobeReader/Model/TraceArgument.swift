/// The value of an argument attached to an event.
public enum TraceArgument: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A signed integer.
    case int(Int64)
    /// An unsigned integer.
    case uint(UInt64)
    /// A floating point number.
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// A string.
    case string(String)

    /// The value as text.
    public var description: String {
        switch self {
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return String(value)
        case .string(let value): return value
        }
    }

    /// The value as a number, when it is one.
    public var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .double(let value): return value
        case .bool(let value): return value ? 1 : 0
        case .string: return nil
        }
    }
}
