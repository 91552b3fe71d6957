/// A moment on a track.
public struct Instant: Sendable, Hashable {
    /// Its name.
    public var name: String
    /// The track it is on.
    public var track: UInt64
    /// The thread, when on a thread track.
    public var tid: Int64?
    /// When, in CLOCK_BOOTTIME nanoseconds.
    public var time: UInt64
    /// Its arguments.
    public var arguments: [String: TraceArgument]
    /// Its categories; empty for none.
    public var categories: [String] = []

    /// An instant.
    public init(
        name: String, track: UInt64, tid: Int64?, time: UInt64, arguments: [String: TraceArgument],
        categories: [String] = []
    ) {
        self.name = name
        self.track = track
        self.tid = tid
        self.time = time
        self.arguments = arguments
        self.categories = categories
    }
}
