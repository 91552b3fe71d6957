import CStrobe

/// The one reserve, write and publish sequence of the hot path, shared by
/// every event kind that writes straight into the calling thread's buffer.
///
/// A record is written in four steps, always in this order:
///
/// 1. **Enter.** The thread marks itself as writing and checks that its
///    buffer records for the running session (`cstrobe_enter_write`); a
///    stopping session waits for the mark to clear.
/// 2. **Reserve.** The record's words must fit between the published end of
///    the buffer and the end of its current chunk, and the session's flags
///    must ask for nothing the fast path cannot do (signposts, clock
///    timestamps, a drop marker to write first).
/// 3. **Write.** The caller fills the words in place.
/// 4. **Publish.** One count of a recorded event, then a release store of
///    the new end, which also clears the writing mark
///    (`cstrobe_publish_and_leave`): the session's writer, which reads the
///    end with an acquire load, sees the whole record or none of it.
///
/// When any check fails nothing is written, the mark is cleared, and the
/// caller takes its out-of-line path (`RecordingSlowPaths.swift`), which
/// gets memory, writes a drop marker, or announces signposts first.
///
/// Everything here is inlined into the public calls of ``Trace``: the
/// closures are non-escaping and are folded away in optimized builds (the
/// instruction counts of `make bench instructions` show it).
@usableFromInline
enum FastRecord {
    /// The cursor flags that send every event to the slow path: a drop marker
    /// is due, the session announces signposts, or its timestamps are read
    /// from the clock rather than the cycle counter.
    @usableFromInline static let slowPathFlags = UInt64(
        CSTROBE_FLAG_DROPPING | CSTROBE_FLAG_SIGNPOSTS | CSTROBE_FLAG_CLOCK_TIMESTAMPS)

    /// Every flag: for records that need none of the fast path's
    /// exceptions, not even rusage bookkeeping.
    @usableFromInline static let anyFlag = UInt64.max

    /// Writes one record into the calling thread's buffer, when it can be
    /// written there and then.
    ///
    /// - Parameters:
    ///   - generation: The running session's generation (or the category's),
    ///     already loaded and not zero.
    ///   - flags: The cursor flags any of which sends the record to the slow
    ///     path.
    ///   - words: How many words the record takes, given the cursor, or nil
    ///     when the record must take the slow path (for example an `end`
    ///     with no open interval).
    ///   - fill: Writes the record at the position given, in the number of
    ///     words `words` returned, reading the timestamp with
    ///     ``timestamp(_:)`` and updating the cursor's nesting state.
    /// - Returns: Whether the record was written and published; when false,
    ///   nothing was written.
    @inlinable @inline(__always)
    static func write(
        generation: UInt64,
        unlessFlags flags: UInt64,
        words: (UnsafeMutablePointer<cstrobe_thread_cursor>) -> Int?,
        fill: (UnsafeMutablePointer<cstrobe_thread_cursor>, UnsafeMutablePointer<UInt64>, Int) -> Void
    ) -> Bool {
        guard let cursor = cstrobe_get_cursor(), cstrobe_enter_write(cursor, generation) else { return false }
        if cursor.pointee.flags & flags == 0, let words = words(cursor) {
            let position = cursor.pointee.published.unsafelyUnwrapped
            if position + words <= cursor.pointee.limit.unsafelyUnwrapped {
                fill(cursor, position, words)
                cstrobe_count_event(cursor, CSTROBE_EVENT_RECORDED)
                cstrobe_publish_and_leave(cursor, position + words)
                return true
            }
        }
        cstrobe_leave_write(cursor)
        return false
    }

    /// The time now, in the raw ticks since the session's base that a record
    /// header holds.
    @inlinable @inline(__always)
    static func timestamp(_ cursor: UnsafeMutablePointer<cstrobe_thread_cursor>) -> UInt64 {
        cstrobe_fast_timestamp() &- cursor.pointee.timestamp_base
    }
}
