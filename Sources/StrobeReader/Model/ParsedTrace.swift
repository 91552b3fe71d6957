/// Everything read from a trace file: intervals, instants and counters, with
/// the threads and tracks they belong to and what was lost.
///
/// Timestamps are CLOCK_BOOTTIME nanoseconds, the trace clock of Perfetto.
public struct ParsedTrace: Sendable {
    /// The traced process, when the trace describes one.
    public var process: TraceProcess?
    /// Threads that have a track, by kernel thread id.
    public var threads: [TraceThread]
    /// Every track the trace describes or uses, by uuid.
    public var tracks: [UInt64: TraceTrack]
    /// Intervals, sorted by start time; at the same start, the outer one
    /// first.
    public var intervals: IntervalList
    /// Instant events, sorted by time.
    public var instants: [Instant]
    /// Counter tracks with their samples.
    public var counters: [CounterSeries]
    /// What the writer lost, and what the reader had to skip.
    public var loss: DataLoss
    /// Problems that did not stop the reading, each with its byte offset.
    public var issues: [TraceReadError]
    /// Set when reading stopped early at a broken or cut-off packet; what
    /// came before it is in this value.
    public var truncation: TraceReadError?
    /// Top-level packets read.
    public var packetCount: Int
    /// Top-level packets that decoded: ``packetCount`` less those skipped.
    /// 0 means nothing in the input was a readable trace packet.
    public var decodedPacketCount: Int
    /// Why the input is not a trace at all, when no packet decoded: empty,
    /// foreign bytes at its start (named, with the bytes shown), or the
    /// first packet's problem; nil when a packet decoded.
    public var notATrace: TraceReadError? = nil
    /// CLOCK_REALTIME less CLOCK_BOOTTIME, in nanoseconds: add it to a
    /// timestamp for Unix-epoch nanoseconds. From the latest clock snapshot
    /// that ties `BUILTIN_CLOCK_REALTIME` to BOOTTIME (Strobe writes one at
    /// each sequence's start); nil when the trace has none, as in traces
    /// from Strobe releases that did not record it and recovered crashes.
    public var realtimeOffset: UInt64? = nil

    /// Puts intervals and instants in time order, as documented.
    mutating func sortByTime() {
        intervals.sortByStart()
        if !zip(instants, instants.dropFirst()).allSatisfy({ $0.time <= $1.time }) {
            instants.sort { $0.time < $1.time }
        }
    }

    /// Whether the whole file was read.
    public var isComplete: Bool { truncation == nil }

    /// The thread with kernel thread id `tid`.
    public func thread(_ tid: Int64) -> TraceThread? { threads.first { $0.tid == tid } }

    /// Intervals named `name`.
    public func intervals(named name: String) -> [Interval] { intervals.filter(named: name) }

    /// The counter track named `name`.
    public func counter(named name: String) -> CounterSeries? { counters.first { $0.name == name } }
}
