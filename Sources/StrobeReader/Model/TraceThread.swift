/// A thread that recorded events.
public struct TraceThread: Sendable, Hashable {
    /// Kernel thread id.
    public var tid: Int64
    /// Process id.
    public var pid: Int32
    /// Thread name.
    public var name: String
    /// The uuid of the thread's track.
    public var trackUUID: UInt64
}
