/// A track: a lane of events in the viewer.
public struct TraceTrack: Sendable, Hashable {
    /// What kind of track it is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A process's track.
        case process
        /// A thread's track.
        case thread
        /// A counter track.
        case counter
        /// An async track of its own (intervals that may cross threads).
        case async
        /// A track used by events but never described.
        case other
    }

    /// The track's uuid.
    public var uuid: UInt64
    /// What kind of track it is.
    public var kind: Kind
    /// Its name.
    public var name: String
    /// The track it is nested under.
    public var parent: UInt64?
    /// The thread, for thread tracks (and counters under one).
    public var tid: Int64?
    /// The process id, when known.
    public var pid: Int32?
    /// The unit of a counter track ("ns", "count", "bytes" or a free name).
    public var counterUnit: String?
    /// Whether the counter is a thread's CPU time.
    public var isThreadTime: Bool
}
