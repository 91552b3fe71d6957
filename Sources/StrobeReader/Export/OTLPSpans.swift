/// A trace's intervals as OpenTelemetry spans, before encoding: ids,
/// parents, links and events, as ``OTLPExport`` writes them.
struct OTLPSpans {
    /// One span.
    struct Span {
        var spanID: UInt64
        var parentIndex: Int?
        var name: String
        var track: UInt64
        var start: UInt64
        var end: UInt64
        var tid: Int64?
        var threadName: String?
        var arguments: [String: TraceArgument]
        var isUnfinished: Bool
        /// Whether it stands for an instant that no span held.
        var isInstant = false
        /// Indexes of the spans this one links to (flows into it).
        var links: [Int] = []
        /// Indexes into the trace's instants.
        var events: [Int] = []
    }

    /// The trace id, 16 bytes.
    var traceID: [UInt8]
    /// The hash the ids derive from (``seed(_:)``).
    var seed: UInt64
    var spans: [Span] = []

    /// The names of instants that are no event of the app's: the session's
    /// metadata and the profile's closing mark.
    static let skippedInstants: Set<String> = [TraceOrigin.eventName, CPUProfile.markName]

    init(_ trace: ParsedTrace) {
        seed = Self.seed(trace)
        traceID = Self.bytes(Self.mix(seed, 1)) + Self.bytes(Self.mix(seed, 2))
        let names = Dictionary(trace.threads.map { ($0.tid, $0.name) }, uniquingKeysWith: { first, _ in first })

        // Spans in the order of their start, a parent before its children:
        // the order the trace keeps its intervals in.
        let intervals = trace.intervals
        spans.reserveCapacity(intervals.count)
        var open: [UInt64: [Int]] = [:]
        var byTrack: [UInt64: [Int]] = [:]
        // Per track, the last start and how many spans before had it.
        var last: [UInt64: (start: UInt64, ordinal: UInt64)] = [:]
        for interval in intervals {
            // Taken out of the table, so growing it copies nothing.
            var stack = open.removeValue(forKey: interval.track) ?? []
            if stack.count > interval.depth { stack.removeLast(stack.count - interval.depth) }
            let parent = interval.depth > 0 && stack.count == interval.depth ? stack.last : nil
            // Unique per trace: the track, the start, and how many spans
            // before it had both (they come one after another on a track).
            let key = Self.mix(Self.mix(seed, interval.track), interval.start)
            var ordinal: UInt64 = 0
            if let previous = last[interval.track], previous.start == interval.start { ordinal = previous.ordinal + 1 }
            last[interval.track] = (interval.start, ordinal)
            let id = Self.mix(key, ordinal) | 1
            let index = spans.count
            spans.append(
                Span(
                    spanID: id, parentIndex: parent, name: interval.name, track: interval.track,
                    start: interval.start,
                    end: interval.end ?? interval.start, tid: interval.tid,
                    threadName: interval.tid.flatMap { names[$0] }, arguments: interval.arguments,
                    isUnfinished: interval.end == nil))
            stack.append(index)
            open[interval.track] = stack
            byTrack[interval.track, default: []].append(index)
        }
        adoptAsyncChildren(trace, byTrack: byTrack)
        linkFlows(intervals)
        attachInstants(trace, byTrack: byTrack, names: names)
    }

    /// An async interval's track sits under its parent interval's track:
    /// a span at the top of such a track is a child of the last span on
    /// the parent track that began at or before it (else the first).
    private mutating func adoptAsyncChildren(_ trace: ParsedTrace, byTrack: [UInt64: [Int]]) {
        for index in spans.indices where spans[index].parentIndex == nil {
            guard let parentTrack = trace.tracks[spans[index].track]?.parent,
                let candidates = byTrack[parentTrack], let first = candidates.first
            else { continue }
            let start = spans[index].start
            spans[index].parentIndex = candidates.last { spans[$0].start <= start } ?? first
        }
    }

    /// Each span that carries a flow id links to the span before it (in
    /// time) that carried the same id.
    private mutating func linkFlows(_ intervals: IntervalList) {
        var last: [UInt64: Int] = [:]
        for (index, interval) in intervals.enumerated() {
            let ids = interval.flowIDs + interval.terminatingFlowIDs
            if ids.isEmpty { continue }
            for id in Set(ids).sorted() {
                if let previous = last[id], previous != index { spans[index].links.append(previous) }
                last[id] = interval.terminatingFlowIDs.contains(id) ? nil : index
            }
        }
    }

    /// Each instant becomes an event of the innermost span on its track
    /// that holds its time, or a zero-length span of its own.
    private mutating func attachInstants(_ trace: ParsedTrace, byTrack: [UInt64: [Int]], names: [Int64: String]) {
        var seen: [UInt64: Int] = [:]
        for (number, instant) in trace.instants.enumerated() where !Self.skippedInstants.contains(instant.name) {
            var holder: Int?
            if let indexes = byTrack[instant.track] {
                var low = 0
                var high = indexes.count
                while low < high {
                    let middle = (low + high) / 2
                    if spans[indexes[middle]].start <= instant.time { low = middle + 1 } else { high = middle }
                }
                // Intervals on a track nest: of the spans that began by
                // then, only the last one and its ancestors can hold it.
                var candidate = low > 0 ? indexes[low - 1] : nil
                while let index = candidate, spans[index].track == instant.track {
                    let span = spans[index]
                    if span.end >= instant.time, !span.isUnfinished || span.start == instant.time {
                        holder = index
                        break
                    }
                    candidate = span.parentIndex
                }
            }
            if let holder {
                spans[holder].events.append(number)
            } else {
                // Unique per trace: the track, the time, and how many
                // instants without a span before it had both.
                let key = Self.mix(Self.mix(Self.mix(seed, instant.track), instant.time), 0x696e_7374)
                let ordinal = seen[key, default: 0]
                seen[key] = ordinal + 1
                var span = Span(
                    spanID: Self.mix(key, UInt64(ordinal)) | 1, parentIndex: nil, name: instant.name,
                    track: instant.track, start: instant.time,
                    end: instant.time, tid: instant.tid, threadName: instant.tid.flatMap { names[$0] },
                    arguments: [:], isUnfinished: false)
                span.events = [number]
                span.isInstant = true
                spans.append(span)
            }
        }
    }

    /// What identifies the trace: its metadata (sorted), its process and
    /// its first moment, hashed.
    static func seed(_ trace: ParsedTrace) -> UInt64 {
        let first = Swift.min(trace.intervals.first?.start ?? .max, trace.instants.first?.time ?? .max)
        return seed(origin: trace.origin, pid: trace.process?.pid, first: first)
    }

    /// The seed of a trace of `origin`, process `pid`, whose first interval
    /// or instant came at `first` (`UInt64.max` for none).
    static func seed(origin: TraceOrigin?, pid: Int32?, first: UInt64) -> UInt64 {
        var text = (origin?.values ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            .joined(separator: "\n")
        text += "\npid=\(pid ?? 0)"
        text += "\nstart=\(first)"
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// SplitMix64's finalizer over `value` and `salt`.
    static func mix(_ value: UInt64, _ salt: UInt64) -> UInt64 {
        var z = value &+ salt &* 0x9e37_79b9_7f4a_7c15 &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// `value`'s 8 bytes, most significant first.
    static func bytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
    }
}
