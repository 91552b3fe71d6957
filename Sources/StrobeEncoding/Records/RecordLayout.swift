import CStrobeLayout

/// The binary layout of records in a thread's buffer.
///
/// A record is a run of 64-bit words. The first word is the header: the event
/// kind in the top byte and a 56-bit timestamp (raw ticks since the session's
/// base) below it. The kind's low nibble says what happened; its high nibble
/// says which attachments follow the fixed part, in this order:
/// rusage (6 words), outgoing flow (1), terminating flow (1), arguments
/// (1 length word + that many words). Counter kinds use the high nibble for the
/// counter's unit instead. An async end may carry flows and arguments too:
/// attributes of a span are often known only when it ends, and so, at times,
/// is its name.
@usableFromInline
package enum RecordLayout {
    @usableFromInline package static let timestampMask: UInt64 = (1 << 56) - 1

    // Event kinds (low nibble).
    @usableFromInline package static let begin: UInt64 = 1
    @usableFromInline package static let end: UInt64 = 2
    @usableFromInline package static let instant: UInt64 = 3
    @usableFromInline package static let counterInt: UInt64 = 4
    @usableFromInline package static let counterDouble: UInt64 = 5
    @usableFromInline package static let asyncBegin: UInt64 = 6
    @usableFromInline package static let asyncEnd: UInt64 = 7
    /// Written before the first record after a run of discarded events; the
    /// payload word holds how many were discarded.
    @usableFromInline package static let dropMarker: UInt64 = 8
    /// An async begin nested under another async interval: the fixed part
    /// adds the parent's identifier after the interval's own.
    @usableFromInline package static let asyncBeginChild: UInt64 = 9
    /// An async begin whose name may change at its end, or that began before
    /// it was recorded: the fixed part is the header, name, identifier,
    /// parent identifier (0 for none) and how many nanoseconds before the
    /// header's time it began. The encoder holds it until the end, and
    /// writes both then.
    @usableFromInline package static let asyncBeginRenamable: UInt64 = 10
    /// An async end that may rename its interval or lie in the past: the
    /// fixed part is the header, the identifier, the new name (0 keeps the
    /// name) and how many nanoseconds before the header's time it ended.
    @usableFromInline package static let asyncEndExplicit: UInt64 = 11
    /// One word written just before a record of a category: the payload is
    /// the category's index plus one. It applies to the record that follows
    /// and has no time of its own.
    @usableFromInline package static let categoryPrefix: UInt64 = 12

    // Attachment flags (high nibble) for begin, end, instant and async kinds.
    @usableFromInline package static let withResourceUsage: UInt64 = 0x10
    @usableFromInline package static let withFlow: UInt64 = 0x20
    @usableFromInline package static let withTerminatingFlow: UInt64 = 0x40
    @usableFromInline package static let withArguments: UInt64 = 0x80

    /// Set in the word of an `asyncBeginRenamable` or `asyncEndExplicit`
    /// record that says how long before the header's time the interval
    /// began or ended: the other 63 bits are then a wall-clock instant
    /// (CLOCK_REALTIME nanoseconds since the Unix epoch), which the writer
    /// places with the wall clock's offset from CLOCK_BOOTTIME (see
    /// ``TimestampConverter/lead(of:at:)``), so a bridge's span, whose
    /// instants are wall-clock times, costs its thread no second clock read.
    @usableFromInline package static let wallClockInstant: UInt64 = 1 << 63
    /// Wall-clock instants this close to their record's time are taken as
    /// that time: a default instant is read just before the call.
    package static let wallClockTolerance: UInt64 = 1_000

    /// Words taken by a resource-usage attachment.
    @usableFromInline package static let resourceUsageWords = 6

    @inlinable @inline(__always)
    package static func header(kind: UInt64, timestamp: UInt64) -> UInt64 {
        (kind << 56) | (timestamp & timestampMask)
    }

    /// Stores a rusage snapshot as the six words of the attachment.
    @inlinable @inline(__always)
    package static func store(_ usage: cstrobe_rusage, at destination: UnsafeMutablePointer<UInt64>) {
        destination[0] = usage.user_ns
        destination[1] = usage.system_ns
        destination[2] = usage.voluntary_switches
        destination[3] = usage.involuntary_switches
        destination[4] = usage.minor_faults
        destination[5] = usage.major_faults
    }

    /// The prefix word announcing category `index` for the next record.
    @inlinable @inline(__always)
    package static func categoryWord(_ index: UInt32) -> UInt64 {
        (categoryPrefix << 56) | (UInt64(index) &+ 1)
    }

    @inlinable @inline(__always)
    package static func kind(of header: UInt64) -> UInt64 { header >> 56 }

    @inlinable @inline(__always)
    package static func timestamp(of header: UInt64) -> UInt64 { header & timestampMask }

    /// What happened: the low nibble of `kind`.
    @inlinable @inline(__always)
    package static func event(of kind: UInt64) -> UInt64 { kind & 0x0F }

    /// Whether `kind` has any attachment (or, for a counter, a unit): its
    /// high nibble.
    @inlinable @inline(__always)
    package static func hasAttachments(_ kind: UInt64) -> Bool { kind & 0xF0 != 0 }

    /// The parent identifier of the async begin `record` of `kind`; 0 when
    /// it has none.
    package static func asyncParent(of record: UnsafePointer<UInt64>, kind: UInt64) -> UInt64 {
        let event = Self.event(of: kind)
        return event == asyncBeginChild || event == asyncBeginRenamable ? record[3] : 0
    }

    /// Words in the fixed part of a record of `kind`, header included.
    @inlinable
    package static func fixedWords(kind: UInt64) -> Int {
        switch event(of: kind) {
        case begin, instant, asyncEnd, dropMarker: return 2
        case end, categoryPrefix: return 1
        case counterInt, counterDouble, asyncBegin: return 3
        case asyncBeginChild, asyncEndExplicit: return 4
        case asyncBeginRenamable: return 5
        default: return 0
        }
    }

    /// The total length of the record starting at `record`, or nil when the
    /// words there are not a valid record (a corrupt or foreign buffer).
    package static func length(of record: UnsafePointer<UInt64>, available: Int) -> Int? {
        let kind = kind(of: record[0])
        let fixed = fixedWords(kind: kind)
        guard fixed > 0, fixed <= available else { return nil }
        let event = Self.event(of: kind)
        if event == counterInt || event == counterDouble || event == dropMarker || event == categoryPrefix {
            return fixed
        }
        var total = ArgumentBlock.offset(kind: kind)
        if kind & withArguments != 0 {
            guard total < available else { return nil }
            let argumentWords = Int(truncatingIfNeeded: record[total])
            guard argumentWords >= 0, argumentWords <= available - total - 1 else { return nil }
            total += 1 + argumentWords
        }
        return total <= available ? total : nil
    }
}
