import CStrobe
import StrobeEncoding

/// Finds the records that meet a trigger's condition, in the background
/// writer, as it looks through what each thread recorded since its last look.
///
/// Why here and not on the recording path: an end record does not carry its
/// interval's name, so checking at the end call would mean remembering the
/// name and start time of every open interval on the thread (two more stores
/// per begin, a load and a compare per end, on every interval, armed or not)
/// or sending armed names down a slower path. The writer instead reads the
/// records once more, off the recording threads, pairs begins with ends the
/// way the encoder does, and checks armed names only: arming a trigger costs
/// the recording threads nothing, and the writer 6 to 12 ns of CPU per record
/// (`make bench triggers`). The price is latency: a trigger is noticed up to
/// one flush interval after its condition was met, so a dump measures its
/// window from the record's own time (the interval's end, the counter's
/// sample), never from the moment it was noticed.
///
/// The writer copies new records out of a thread's ring one chunk at a time
/// under the thread's lock (at most one chunk, 64 KiB, per hold; the thread
/// waits for it only if it must switch chunks at that moment), then reads the
/// copy. When the ring overwrote records before the writer saw them, the
/// intervals open across the gap cannot be paired and are not checked.
final class TriggerWatch {
    private let triggers: [TraceConfiguration.Trigger]
    /// Interval thresholds in nanoseconds, by trigger index (-1: not an
    /// interval trigger).
    private let thresholds: [Int64]
    /// Whether any trigger watches intervals.
    private let watchesIntervals: Bool
    /// Whether each counter trigger's counter is beyond its threshold now.
    private var beyond: [Bool]
    /// The armed trigger of a name word: its index, or -1; a direct-mapped
    /// cache in front of a dictionary, so most records cost a compare.
    private var cacheWords = [UInt64](repeating: .max, count: 256)
    private var cacheIndices = [Int](repeating: -1, count: 256)
    private var classified: [UInt64: Int] = [:]
    /// Async intervals of armed names still open: their trigger and start.
    private var openAsync: [UInt64: (trigger: Int, start: UInt64)] = [:]
    /// Async ends whose begin was not seen yet, with their times (tagged
    /// CLOCK_BOOTTIME), from this turn and the one before: an interval that
    /// began on a thread looked at after the thread that ended it.
    private var earlyEnds: [UInt64: UInt64] = [:]
    private var earlierEnds: [UInt64: UInt64] = [:]
    /// At most this many async intervals of armed names are followed at
    /// once; past it they are all forgotten, and their ends not checked.
    private static let openAsyncLimit = 1 << 16
    private var threads: [UInt64: ThreadWatch] = [:]
    private var scratch: UnsafeMutablePointer<UInt64>
    private var scratchWords: Int

    /// Where the writer is in one thread's records, and the thread's open
    /// intervals there.
    struct ThreadWatch {
        var chunk: BufferChunk?
        var firstEvent: UInt64 = 0
        var offset = 0
        /// Open intervals: the armed trigger (or -1), the start, the category.
        var open: [(trigger: Int, start: UInt64, category: UInt64)] = []
        var pendingCategory: UInt64 = 0
    }

    init(triggers: [TraceConfiguration.Trigger]) {
        self.triggers = triggers
        thresholds = triggers.map { trigger in
            if case .intervalLongerThan(_, let threshold) = trigger.condition {
                return Int64(clamping: Trace.nanoseconds(threshold))
            }
            return -1
        }
        beyond = Array(repeating: false, count: triggers.count)
        watchesIntervals = thresholds.contains { $0 >= 0 }
        scratchWords = 1 << 13
        scratch = .allocate(capacity: scratchWords)
    }

    deinit { scratch.deallocate() }

    /// Whether any trigger needs the records looked through.
    var isNeeded: Bool { !triggers.isEmpty }

    // MARK: Reading the rings

    /// Starts a turn of looking through every thread.
    func beginTurn() {
        earlierEnds = earlyEnds
        earlyEnds = [:]
        if openAsync.count > Self.openAsyncLimit { openAsync.removeAll() }
    }

    /// Looks through what `recorder` published since the last look, at most
    /// `ringChunks` chunks and a little more (a thread that records faster
    /// than the writer reads does not hold it); returns the triggers whose
    /// conditions were met, in record order.
    func scan(_ recorder: ThreadBuffer, ringChunks: Int, converter: inout TimestampConverter) -> [FiredTrigger] {
        var watch = threads[recorder.serial] ?? ThreadWatch()
        var fired: [FiredTrigger] = []
        for _ in 0..<(ringChunks + 2) {
            guard let count = copyNext(recorder, &watch) else { break }
            read(scratch, count: count, watch: &watch, thread: recorder.threadID, converter: &converter, into: &fired)
        }
        threads[recorder.serial] = watch
        return fired
    }

    /// Copies the next run of unread records into `scratch`; nil when there
    /// is none.
    private func copyNext(_ recorder: ThreadBuffer, _ watch: inout ThreadWatch) -> Int? {
        let capacity = scratchWords
        let scratch = scratch
        let result: (count: Int, gap: Bool, grow: Int)? = recorder.shared.withLock { state in
            // The ring in order: the sealed chunks, oldest first, then the
            // current one (none once the thread has exited).
            let current = state.current
            let count = state.sealed.count + (current == nil ? 0 : 1)
            guard count > 0 else { return nil }
            func chunk(_ position: Int) -> BufferChunk {
                position < state.sealed.count ? state.sealed[position] : current!
            }
            var gap = false
            var found: Int?
            if let chunk = watch.chunk, chunk.firstEvent == watch.firstEvent {
                found = chunk === current ? state.sealed.count : state.sealed.firstIndex { $0 === chunk }
            }
            if found == nil {
                // The first look, or the ring overwrote the chunk: start at
                // the oldest record held.
                gap = watch.chunk != nil
                watch.chunk = chunk(0)
                watch.firstEvent = chunk(0).firstEvent
                watch.offset = 0
            }
            var position = found ?? 0
            while true {
                let next = chunk(position)
                let end: Int
                if next === current {
                    guard let published = cstrobe_read_published(recorder.cursor), published >= next.base,
                        published <= next.limit
                    else { return gap ? (0, true, 0) : nil }
                    end = published - next.base
                } else {
                    end = next.usedWords
                }
                if watch.offset < end {
                    let words = end - watch.offset
                    if words > capacity { return (0, gap, words) }
                    scratch.update(from: next.base + watch.offset, count: words)
                    watch.offset = end
                    return (words, gap, 0)
                }
                position += 1
                if position == count { return gap ? (0, true, 0) : nil }
                watch.chunk = chunk(position)
                watch.firstEvent = chunk(position).firstEvent
                watch.offset = 0
            }
        }
        guard let result else { return nil }
        if result.gap {
            watch.open.removeAll()
            watch.pendingCategory = 0
        }
        if result.grow > 0 {
            scratchWords = max(result.grow, scratchWords * 2)
            self.scratch.deallocate()
            self.scratch = .allocate(capacity: scratchWords)
            return 0
        }
        return result.count
    }

    /// Reads records that a capture took out of the ring (`pieces`, in ring
    /// order, each a chunk's words from an offset), starting where the last
    /// look stopped, then moves the look to `boundary`, where the ring now
    /// begins.
    func catchUp(
        _ recorder: ThreadBuffer, pieces: [TakenPiece], boundary: TakenPiece.Origin?,
        converter: inout TimestampConverter
    ) -> [FiredTrigger] {
        var watch = threads[recorder.serial] ?? ThreadWatch()
        var fired: [FiredTrigger] = []
        let found = pieces.firstIndex { piece in
            guard let chunk = watch.chunk, piece.origin.chunk === chunk, piece.origin.firstEvent == watch.firstEvent
            else { return false }
            return watch.offset >= piece.origin.offset && watch.offset <= piece.origin.offset + piece.words
        }
        if found == nil, watch.chunk != nil, !pieces.isEmpty {
            // The ring overwrote where the last look stopped.
            watch.open.removeAll()
            watch.pendingCategory = 0
        }
        let start = found ?? 0
        for (position, piece) in pieces.enumerated() where position >= start {
            let skip = position == found ? watch.offset - piece.origin.offset : 0
            if skip < piece.words {
                read(
                    piece.chunk.base + skip, count: piece.words - skip, watch: &watch, thread: recorder.threadID,
                    converter: &converter, into: &fired)
            }
        }
        watch.chunk = boundary?.chunk
        watch.firstEvent = boundary?.firstEvent ?? 0
        watch.offset = boundary?.offset ?? 0
        threads[recorder.serial] = watch
        return fired
    }

    // MARK: Reading records

    private func read(
        _ base: UnsafeMutablePointer<UInt64>, count: Int, watch: inout ThreadWatch, thread: UInt64,
        converter: inout TimestampConverter, into fired: inout [FiredTrigger]
    ) {
        var index = 0
        while index < count {
            let record = UnsafePointer(base + index)
            guard let length = RecordLayout.length(of: record, available: count - index) else { return }
            index += length
            let header = record[0]
            let event = RecordLayout.event(of: RecordLayout.kind(of: header))
            switch event {
            case RecordLayout.categoryPrefix:
                watch.pendingCategory = RecordLayout.timestamp(of: header)
                continue
            case RecordLayout.begin:
                watch.open.append((armed(record[1]), RecordLayout.timestamp(of: header), watch.pendingCategory))
            case RecordLayout.end:
                let time = RecordLayout.timestamp(of: header)
                if watch.pendingCategory > 1 {
                    let category = watch.pendingCategory
                    guard let innermost = watch.open.lastIndex(where: { $0.category == category }) else { break }
                    // Intervals above it lost their ends when their category
                    // was turned off; the trace ends them here too.
                    while watch.open.count > innermost {
                        let open = watch.open.removeLast()
                        check(open.trigger, open.start, time, thread: thread, converter: &converter, into: &fired)
                    }
                } else if let open = watch.open.popLast() {
                    check(open.trigger, open.start, time, thread: thread, converter: &converter, into: &fired)
                }
            case RecordLayout.asyncBegin, RecordLayout.asyncBeginChild, RecordLayout.asyncBeginRenamable:
                let trigger = armed(record[1])
                guard trigger >= 0 else { break }
                var start = RecordLayout.timestamp(of: header)
                if event == RecordLayout.asyncBeginRenamable {
                    let boottime = converter.boottime(raw: start)
                    start = (boottime &- converter.lead(of: record[4], at: boottime)) | Self.boottimeTag
                }
                let id = record[2]
                if let end = earlyEnds.removeValue(forKey: id) ?? earlierEnds.removeValue(forKey: id) {
                    check(trigger, start, end, thread: thread, converter: &converter, into: &fired)
                } else {
                    openAsync[id] = (trigger, start)
                }
            case RecordLayout.asyncEnd, RecordLayout.asyncEndExplicit:
                var end = RecordLayout.timestamp(of: header)
                if event == RecordLayout.asyncEndExplicit {
                    let boottime = converter.boottime(raw: end)
                    end = (boottime &- converter.lead(of: record[3], at: boottime)) | Self.boottimeTag
                }
                if let open = openAsync.removeValue(forKey: record[1]) {
                    check(open.trigger, open.start, end, thread: thread, converter: &converter, into: &fired)
                } else if watchesIntervals {
                    earlyEnds[record[1]] =
                        (end & Self.boottimeTag != 0 ? end : converter.boottime(raw: end) | Self.boottimeTag)
                }
            case RecordLayout.counterInt, RecordLayout.counterDouble:
                let trigger = armed(record[1])
                if trigger >= 0 {
                    let value =
                        event == RecordLayout.counterInt
                        ? Double(Int64(bitPattern: record[2])) : Double(bitPattern: record[2])
                    checkCounter(
                        trigger, name: record[1], value: value, at: RecordLayout.timestamp(of: header), thread: thread,
                        converter: &converter, into: &fired)
                }
            default:
                break
            }
            watch.pendingCategory = 0
        }
    }

    /// Set on a time that is already CLOCK_BOOTTIME nanoseconds rather than
    /// a raw timestamp (the top bit: raw timestamps have 56).
    private static let boottimeTag: UInt64 = 1 << 63

    private func boottime(_ time: UInt64, _ converter: inout TimestampConverter) -> UInt64 {
        time & Self.boottimeTag != 0 ? time & ~Self.boottimeTag : converter.boottime(raw: time)
    }

    @inline(__always)
    private func check(
        _ trigger: Int, _ start: UInt64, _ end: UInt64, thread: UInt64, converter: inout TimestampConverter,
        into fired: inout [FiredTrigger]
    ) {
        guard trigger >= 0, thresholds[trigger] >= 0 else { return }
        let begin = boottime(start, &converter)
        let finish = boottime(end, &converter)
        let duration = Int64(bitPattern: finish &- begin)
        guard duration > thresholds[trigger] else { return }
        let name = triggers[trigger].name
        fired.append(
            FiredTrigger(
                reason: triggers[trigger].description, boottime: finish, threadID: thread,
                arguments: [
                    ("interval", .string(name)), ("duration_ns", .int(duration)),
                    ("threshold_ns", .int(thresholds[trigger])),
                ]))
    }

    private func checkCounter(
        _ first: Int, name word: UInt64, value: Double, at time: UInt64, thread: UInt64,
        converter: inout TimestampConverter, into fired: inout [FiredTrigger]
    ) {
        // Several triggers may watch one counter: the cache names the first.
        let name = triggers[first].name
        for index in first..<triggers.count where triggers[index].name == name {
            let isBeyond: Bool
            let threshold: Double
            switch triggers[index].condition {
            case .counterAbove(_, let limit): (isBeyond, threshold) = (value > limit, limit)
            case .counterBelow(_, let limit): (isBeyond, threshold) = (value < limit, limit)
            case .intervalLongerThan: continue
            }
            defer { beyond[index] = isBeyond }
            guard isBeyond, !beyond[index] else { continue }
            fired.append(
                FiredTrigger(
                    reason: triggers[index].description, boottime: converter.boottime(raw: time), threadID: thread,
                    arguments: [
                        ("counter", .string(name)), ("value", .double(value)), ("threshold", .double(threshold)),
                    ]))
        }
    }

    /// The first trigger armed for the name `word`, or -1.
    @inline(__always)
    private func armed(_ word: UInt64) -> Int {
        let slot = Int(truncatingIfNeeded: (word ^ (word >> 13) ^ (word >> 48)) & 255)
        if cacheWords[slot] == word { return cacheIndices[slot] }
        let index: Int
        if let known = classified[word] {
            index = known
        } else {
            let text = NameTable.shared.text(of: word)
            index = triggers.firstIndex { $0.name == text } ?? -1
            classified[word] = index
        }
        cacheWords[slot] = word
        cacheIndices[slot] = index
        return index
    }
}

/// A run of records a capture took out of a thread's ring.
struct TakenPiece {
    /// Where the words came from in the ring.
    struct Origin {
        var chunk: BufferChunk
        var firstEvent: UInt64
        var offset: Int
    }

    /// Holds the words from its first word on.
    var chunk: BufferChunk
    var words: Int
    var origin: Origin
    /// Whether `chunk` came from the pool and goes back to it.
    var fromPool: Bool
}
