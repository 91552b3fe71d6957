/// The intervals of a trace, in a compact form: a random-access collection
/// of ``Interval`` values.
///
/// A trace holds millions of intervals, so they are not kept as `Interval`
/// values: each is a 24-byte record with its name and track as indices into
/// tables shared by all intervals, and its rare parts (CPU time, arguments,
/// flows, a duration over four seconds) in a side table. An `Interval` is
/// built when it is accessed, which costs a few loads and no allocation.
///
/// ```swift
/// for interval in trace.intervals where interval.duration != nil { print(interval.name) }
/// let copy = Array(trace.intervals)  // a mutable array of intervals
/// ```
public struct IntervalList: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral,
    CustomStringConvertible
{
    /// One interval.
    @usableFromInline
    struct Record: Sendable {
        @usableFromInline var start: UInt64
        /// The duration, `UInt32.max` when the interval never ended; for an
        /// interval with an extra, the extra's index in `extras`.
        @usableFromInline var duration: UInt32
        @usableFromInline var name: UInt32
        @usableFromInline var track: UInt32
        /// The depth in the low 31 bits; the top bit is `hasExtraFlag`.
        @usableFromInline var depthAndFlag: UInt32

        @usableFromInline static let hasExtraFlag: UInt32 = 1 << 31
        @usableFromInline static let depthMask: UInt32 = hasExtraFlag - 1

        @inlinable var hasExtra: Bool { depthAndFlag & Self.hasExtraFlag != 0 }

        @usableFromInline
        init(start: UInt64, duration: UInt32, name: UInt32, track: UInt32, depthAndFlag: UInt32) {
            self.start = start
            self.duration = duration
            self.name = name
            self.track = track
            self.depthAndFlag = depthAndFlag
        }
    }

    /// What intervals on one track share. `tid` is `.min` when there is none.
    @usableFromInline
    struct Track: Sendable, Hashable {
        @usableFromInline var uuid: UInt64
        @usableFromInline var tid: Int64
        @usableFromInline var isAsync: Bool

        @usableFromInline
        init(uuid: UInt64, tid: Int64, isAsync: Bool) {
            self.uuid = uuid
            self.tid = tid
            self.isAsync = isAsync
        }
    }

    /// The parts of an interval that do not fit its record. `duration` is
    /// `.max` when the interval never ended, `cpuTime` when not captured.
    @usableFromInline
    struct Extra: Sendable {
        @usableFromInline var duration: UInt64
        @usableFromInline var depth: Int32
        @usableFromInline var cpuTime: UInt64
        @usableFromInline var details: IntervalDetails?

        @usableFromInline
        init(duration: UInt64, depth: Int32, cpuTime: UInt64, details: IntervalDetails?) {
            self.duration = duration
            self.depth = depth
            self.cpuTime = cpuTime
            self.details = details
        }
    }

    @usableFromInline var records: [Record]
    @usableFromInline var names: [String]
    @usableFromInline var tracks: [Track]
    @usableFromInline var extras: [Extra]

    init(records: [Record], names: [String], tracks: [Track], extras: [Extra]) {
        self.records = records
        self.names = names
        self.tracks = tracks
        self.extras = extras
    }

    /// Puts the intervals in start order, outer before inner at the same
    /// start. A trace holds each thread's intervals in order but interleaves
    /// threads by chunk, so this checks first and sorts only when needed.
    mutating func sortByStart() {
        if zip(records, records.dropFirst()).allSatisfy({ $0.start <= $1.start }) { return }
        records.sort {
            ($0.start, $0.depthAndFlag & Record.depthMask) < ($1.start, $1.depthAndFlag & Record.depthMask)
        }
    }

    /// An empty list.
    public init() {
        self.init(records: [], names: [], tracks: [], extras: [])
    }

    /// A list holding `intervals`, in order.
    public init(_ intervals: some Sequence<Interval>) {
        self.init()
        var nameIndex: [String: UInt32] = [:]
        var trackIndex: [Track: UInt32] = [:]
        for interval in intervals {
            let name: UInt32
            if let known = nameIndex[interval.name] {
                name = known
            } else {
                name = UInt32(names.count)
                names.append(interval.name)
                nameIndex[interval.name] = name
            }
            let key = Track(uuid: interval.track, tid: interval.tid ?? .min, isAsync: interval.isAsync)
            let track: UInt32
            if let known = trackIndex[key] {
                track = known
            } else {
                track = UInt32(tracks.count)
                tracks.append(key)
                trackIndex[key] = track
            }
            let depth = Int32(clamping: interval.depth)
            let duration = interval.duration ?? .max
            if interval.cpuTime != nil || interval.details != nil || depth < 0
                || duration != .max && duration >= UInt64(UInt32.max)
            {
                records.append(
                    Record(
                        start: interval.start, duration: UInt32(extras.count), name: name, track: track,
                        depthAndFlag: Record.hasExtraFlag | UInt32(Swift.max(depth, 0))))
                extras.append(
                    Extra(
                        duration: duration, depth: depth, cpuTime: interval.cpuTime ?? .max, details: interval.details))
            } else {
                records.append(
                    Record(
                        start: interval.start, duration: duration == .max ? .max : UInt32(duration), name: name,
                        track: track, depthAndFlag: UInt32(depth)))
            }
        }
    }

    /// A list holding `elements`, in order.
    public init(arrayLiteral elements: Interval...) {
        self.init(elements)
    }

    /// The position of the first interval.
    @inlinable public var startIndex: Int { 0 }

    /// The position after the last interval.
    @inlinable public var endIndex: Int { records.count }

    /// The number of intervals.
    @inlinable public var count: Int { records.count }

    /// The interval at `position`.
    @inlinable
    public subscript(position: Int) -> Interval {
        interval(at: position)
    }

    @inlinable @inline(__always)
    func interval(at position: Int) -> Interval {
        let record = records[position]
        let track = tracks[Int(record.track)]
        var duration = record.duration == .max ? UInt64.max : UInt64(record.duration)
        var depth = Int32(bitPattern: record.depthAndFlag & Record.depthMask)
        var cpuTime = UInt64.max
        var details: IntervalDetails?
        if record.hasExtra {
            let extra = extras[Int(record.duration)]
            duration = extra.duration
            depth = extra.depth
            cpuTime = extra.cpuTime
            details = extra.details
        }
        return Interval(
            name: names[Int(record.name)], track: track.uuid, storedThread: track.tid, start: record.start,
            storedDuration: duration, storedDepth: depth, storedCPUTime: cpuTime, isAsync: track.isAsync,
            details: details)
    }

    /// The start of every interval, in order, without building them.
    var startTimes: LazyMapSequence<[Record], UInt64> { records.lazy.map(\.start) }

    /// The latest end of an interval that ended, without building them.
    var latestEnd: UInt64? {
        var latest: UInt64?
        for record in records {
            let duration =
                record.hasExtra
                ? extras[Int(record.duration)].duration
                : record.duration == .max ? UInt64.max : UInt64(record.duration)
            guard duration != .max else { continue }
            latest = Swift.max(latest ?? 0, record.start &+ duration)
        }
        return latest
    }

    /// The intervals named `name`, comparing each name of the table once.
    func filter(named name: String) -> [Interval] {
        var matches = [Bool](repeating: false, count: names.count)
        var any = false
        for (index, candidate) in names.enumerated() where candidate == name {
            matches[index] = true
            any = true
        }
        guard any else { return [] }
        var result: [Interval] = []
        for position in records.indices where matches[Int(records[position].name)] {
            result.append(interval(at: position))
        }
        return result
    }

    /// The intervals, as an array literal would print them.
    public var description: String { Array(self).description }

    /// Whether both lists hold equal intervals in the same order.
    public static func == (lhs: IntervalList, rhs: IntervalList) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    /// Hashes the intervals in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for interval in self { hasher.combine(interval) }
    }
}
