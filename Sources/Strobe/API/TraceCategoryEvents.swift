import CStrobe
import StrobeEncoding

/// The calls of ``Trace`` for events in a ``Trace/Category``.
///
/// Each reads its category's state first: one load tells both whether a
/// session runs and whether it records the category, so an event in a
/// category that is off costs what an event with no session costs.
extension Trace {
    // MARK: Intervals

    /// Opens an interval in `category` on the calling thread.
    ///
    /// Close it with ``end(category:)``, which skips the end when the begin
    /// was skipped. Prefer ``interval(_:category:_:)``,
    /// which pairs them even when the category is turned on or off while
    /// the interval is open.
    @inlinable @inline(__always)
    public static func begin(_ name: Name, category: Category) {
        beginRecorded(name, category: category)
    }

    /// Opens an interval in `category`; returns whether the category is
    /// recorded, that is whether an end must follow.
    @inlinable @inline(__always) @discardableResult
    static func beginRecorded(_ name: Name, category: Category) -> Bool {
        let generation = cstrobe_category_generation(category.index)
        if generation == 0 { return false }
        let written = FastRecord.write(generation: generation, unlessFlags: FastRecord.anyFlag, words: { _ in 3 }) {
            cursor, position, _ in
            position[0] = category.recordWord
            position[1] = RecordLayout.header(kind: RecordLayout.begin, timestamp: FastRecord.timestamp(cursor))
            position[2] = name.word
            cstrobe_open_categorized_level(cursor, cursor.pointee.depth, UInt64(category.index) &+ 1)
            cursor.pointee.depth &+= 1
        }
        if written { return true }
        recordBegin(name, capturing: [], flow: nil, terminatingFlow: nil, arguments: [:], category: category.recordWord)
        return true
    }

    /// Closes the innermost open interval of the calling thread, opened by
    /// ``begin(_:category:)`` in `category`; does nothing
    /// while the category is off.
    ///
    /// When the category was turned on or off between the begin and the
    /// end, the trace stays well nested: an end closes the innermost open
    /// interval in its category, and those above it, whose ends were
    /// skipped, end with it; an end with no open interval in its category
    /// (its begin was skipped) closes nothing, leaving the intervals around
    /// it open, and the writer leaves it out and counts it in the trace's
    /// statistics. Past 64 nested intervals an end in a category is
    /// taken to close the innermost one.
    @inlinable @inline(__always)
    public static func end(category: Category) {
        let generation = cstrobe_category_generation(category.index)
        if generation == 0 { return }
        let written = FastRecord.write(
            generation: generation, unlessFlags: FastRecord.anyFlag,
            words: { cursor in
                guard cursor.pointee.depth > 0 else { return nil }
                let level = cursor.pointee.depth &- 1
                // The innermost interval was opened in this category: the
                // end closes it. (Otherwise its own begin was skipped, and
                // the slow path drops the end.)
                guard cstrobe_level_is_in_category(cursor, level, UInt64(category.index) &+ 1),
                    cursor.pointee.rusage_levels & (1 << UInt64(level)) == 0
                else { return nil }
                return 2
            }
        ) { cursor, position, _ in
            let level = cursor.pointee.depth &- 1
            position[0] = category.recordWord
            position[1] = RecordLayout.header(kind: RecordLayout.end, timestamp: FastRecord.timestamp(cursor))
            cursor.pointee.categorized_levels &= ~(1 << UInt64(level))
            cursor.pointee.depth = level
        }
        if written { return }
        recordEnd(category: category.recordWord)
    }

    /// Runs `body` inside an interval in `category` and returns its result;
    /// just runs `body` while the category is off.
    @inlinable @discardableResult
    public static func interval<Result, Failure: Error>(
        _ name: Name,
        category: Category,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        guard beginRecorded(name, category: category) else { return try body() }
        defer { end() }
        return try body()
    }

    /// Runs asynchronous `body` inside an async interval in `category`, nested
    /// as ``interval(_:isolation:_:)`` nests; just runs
    /// `body` while the category is off.
    @inlinable @discardableResult
    public static func interval<Result, Failure: Error>(
        _ name: Name,
        category: Category,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        guard cstrobe_category_generation(category.index) != 0 else { return try await body() }
        let interval = recordAsyncBegin(name, arguments: [:], category: category.recordWord)
        defer { interval.end() }
        return try await withInnermostInterval(interval.id, isolation: isolation, body)
    }

    /// Opens an interval in `category` that may end on another thread,
    /// nested under the innermost async interval of the current task; while
    /// the category is off, the returned interval records nothing.
    @inlinable
    public static func beginAsync(
        _ name: Name, category: Category, arguments: KeyValuePairs<StaticString, ArgumentValue> = [:]
    ) -> AsyncInterval {
        guard cstrobe_category_generation(category.index) != 0 else { return AsyncInterval(id: 0) }
        return recordAsyncBegin(name, arguments: arguments, category: category.recordWord)
    }

    // MARK: Instants and counters

    /// Marks a moment in `category` on the calling thread.
    @inlinable
    public static func instant(
        _ name: Name, category: Category, arguments: KeyValuePairs<StaticString, ArgumentValue> = [:]
    ) {
        guard cstrobe_category_generation(category.index) != 0 else { return }
        recordInstant(name, arguments: arguments, category: category.recordWord)
    }

    /// Records an integer value in `category` on the counter track `name`,
    /// clamped to `Int64`'s range.
    @inlinable @inline(__always)
    public static func counter(
        _ name: Name, _ value: some BinaryInteger, category: Category, unit: CounterUnit = .count
    ) {
        writeCounter(
            name, kind: RecordLayout.counterInt, bits: UInt64(bitPattern: Int64(clamping: value)), unit: unit,
            category: category)
    }

    /// Records a floating point value in `category` on the counter track `name`.
    @inlinable @inline(__always)
    public static func counter(_ name: Name, _ value: Double, category: Category, unit: CounterUnit = .count) {
        writeCounter(name, kind: RecordLayout.counterDouble, bits: value.bitPattern, unit: unit, category: category)
    }

    @inlinable @inline(__always)
    static func writeCounter(_ name: Name, kind: UInt64, bits: UInt64, unit: CounterUnit, category: Category) {
        let generation = cstrobe_category_generation(category.index)
        if generation == 0 { return }
        let kind = kind | (UInt64(unit.rawValue) << 4)
        let written = FastRecord.write(generation: generation, unlessFlags: FastRecord.slowPathFlags, words: { _ in 4 })
        {
            cursor, position, _ in
            position[0] = category.recordWord
            position[1] = RecordLayout.header(kind: kind, timestamp: FastRecord.timestamp(cursor))
            position[2] = name.word
            position[3] = bits
        }
        if written { return }
        recordCounter(name, kind: kind, bits: bits, category: category.recordWord)
    }
}
