import StrobeEncoding

/// The CPU samples of a session that keeps its events in rings (a flight
/// recorder, or `whenBufferFull: .overwriteOldest`): the writer moves the
/// samplers' records here as it goes, and a dump (or the file written at
/// stop) takes those of its window.
///
/// Records are kept as `cstrobe_sampler_drain` writes them, oldest first,
/// for ``keptNanoseconds`` behind the newest and at most ``capacity``
/// words; a record dropped for room while it was still inside that span is
/// counted in ``lost``, as samples a ring had no room for are.
struct SampleHistory {
    /// How long behind the newest sample records are kept, in nanoseconds.
    let keptNanoseconds: UInt64
    /// The most words kept.
    let capacity: Int
    /// Records, concatenated, oldest first.
    private var words: [UInt64] = []
    /// Where each record starts in ``words``, with its time.
    private var starts: [(offset: Int, time: UInt64)] = []
    /// The first record still kept.
    private var first = 0
    /// Samples dropped for room while they were inside the kept span.
    private(set) var lost: UInt64 = 0
    /// The newest sample's time.
    private var newest: UInt64 = 0

    init(keptNanoseconds: UInt64, capacity: Int = 1 << 20) {
        self.keptNanoseconds = keptNanoseconds
        self.capacity = capacity
    }

    /// Appends the records in `records` and drops what is too old or too
    /// much.
    mutating func append(_ records: UnsafeBufferPointer<UInt64>) {
        var index = 0
        while let length = ProfileEncoder.recordLength(in: records, at: index) {
            starts.append((words.count, records[index + 1]))
            newest = max(newest, records[index + 1])
            words.append(contentsOf: records[index..<(index + length)])
            index += length
        }
        trim()
    }

    private mutating func trim() {
        guard first < starts.count else { return }
        let oldestKept = newest &- min(newest, keptNanoseconds)
        while first < starts.count, starts[first].time < oldestKept { first += 1 }
        while first < starts.count, words.count - starts[first].offset > capacity {
            first += 1
            lost += 1
        }
        // Compact once the dropped part is as large as what is kept.
        if first > 0, first == starts.count || starts[first].offset * 2 >= words.count {
            let offset = first < starts.count ? starts[first].offset : words.count
            words.removeFirst(offset)
            starts = starts[first...].map { ($0.offset - offset, $0.time) }
            first = 0
        }
    }

    /// The records taken from `from` to `to` (CLOCK_BOOTTIME), oldest first.
    func records(from: UInt64, to: UInt64) -> [UInt64] {
        var chosen: [UInt64] = []
        for index in first..<starts.count where starts[index].time >= from && starts[index].time <= to {
            let end = index + 1 < starts.count ? starts[index + 1].offset : words.count
            chosen.append(contentsOf: words[starts[index].offset..<end])
        }
        return chosen
    }

    /// Every record kept, oldest first.
    var all: [UInt64] { records(from: 0, to: .max) }
}
