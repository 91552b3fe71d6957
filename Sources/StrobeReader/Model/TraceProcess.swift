/// The traced process.
public struct TraceProcess: Sendable, Hashable {
    /// Process id.
    public var pid: Int32
    /// Process name.
    public var name: String
}
