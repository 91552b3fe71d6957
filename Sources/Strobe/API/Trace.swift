import CStrobe
import StrobeEncoding

/// Marks intervals, instants and counters in the running trace session.
///
/// Every call is cheap enough for production code: with no session running it
/// costs a load and a branch; while a session records, a `begin` or `end` with
/// a literal name writes two words into the calling thread's own buffer with no
/// lock and no allocation.
///
/// ```swift
/// import Strobe
///
/// let session = try TraceSession.start(TraceConfiguration(outputPath: "app.pftrace"))
/// Trace.interval("load model") {
///     Trace.begin("parse")
///     parse()
///     Trace.end()
///     Trace.counter("cache entries", cache.count)
/// }
/// try session.stop()
/// ```
///
/// Intervals nest per thread: each ``end()`` closes the innermost open
/// ``begin(_:)`` of the same thread. For work that crosses an
/// `await` and may resume on another thread, use ``beginAsync(_:arguments:)``
/// or the `async` form of ``interval(_:capturing:_:)``.
public enum Trace {
    // MARK: Intervals

    /// Opens an interval on the calling thread.
    @inlinable @inline(__always)
    public static func begin(_ name: Name) {
        let generation = cstrobe_load_generation()
        if generation == 0 { return }
        let written = FastRecord.write(generation: generation, unlessFlags: FastRecord.anyFlag, words: { _ in 2 }) {
            cursor, position, _ in
            position[0] = RecordLayout.header(kind: RecordLayout.begin, timestamp: FastRecord.timestamp(cursor))
            position[1] = name.word
            cursor.pointee.depth &+= 1
        }
        if written { return }
        recordBegin(name, capturing: [], flow: nil, terminatingFlow: nil, arguments: [:])
    }

    /// Opens an interval on the calling thread, with extras.
    ///
    /// - Parameters:
    ///   - name: The interval's name.
    ///   - capturing: Extra data to capture at both ends, such as
    ///     ``Capture/resourceUsage``.
    ///   - flow: Starts or continues a flow at this interval.
    ///   - terminatingFlow: Ends a flow at this interval.
    ///   - arguments: Values shown with the interval.
    @inlinable
    public static func begin(
        _ name: Name,
        capturing: Capture = [],
        flow: Flow? = nil,
        terminatingFlow: Flow? = nil,
        arguments: KeyValuePairs<StaticString, ArgumentValue> = [:]
    ) {
        let generation = cstrobe_load_generation()
        if generation == 0 { return }
        if capturing == .resourceUsage, flow == nil, terminatingFlow == nil, arguments.isEmpty {
            // Rusage levels are bits of the cursor: the first 64 only.
            let written = FastRecord.write(
                generation: generation, unlessFlags: FastRecord.slowPathFlags,
                words: { cursor in cursor.pointee.depth < 64 ? 2 + RecordLayout.resourceUsageWords : nil }
            ) { cursor, position, _ in
                let timestamp = FastRecord.timestamp(cursor)
                var usage = cstrobe_rusage()
                cstrobe_thread_rusage(&usage)
                position[0] = RecordLayout.header(
                    kind: RecordLayout.begin | RecordLayout.withResourceUsage, timestamp: timestamp)
                position[1] = name.word
                RecordLayout.store(usage, at: position + 2)
                cursor.pointee.rusage_levels |= 1 << UInt64(cursor.pointee.depth)
                cursor.pointee.depth &+= 1
            }
            if written { return }
        }
        recordBegin(name, capturing: capturing, flow: flow, terminatingFlow: terminatingFlow, arguments: arguments)
    }

    /// Closes the innermost open interval of the calling thread.
    ///
    /// An `end` with no open interval is ignored and counted in the trace's
    /// statistics.
    @inlinable @inline(__always)
    public static func end() {
        let generation = cstrobe_load_generation()
        if generation == 0 { return }
        // The level closed and its bit, found while sizing the record.
        var level: Int64 = 0
        var bit: UInt64 = 0
        let written = FastRecord.write(
            generation: generation, unlessFlags: FastRecord.slowPathFlags | UInt64(CSTROBE_FLAG_DEEP_RUSAGE),
            words: { cursor in
                guard cursor.pointee.depth > 0 else { return nil }
                level = cursor.pointee.depth &- 1
                // Zero from level 64 on, where no fast-path begin captured rusage.
                bit = 1 << UInt64(level)
                return cursor.pointee.rusage_levels & bit == 0 ? 1 : 1 + RecordLayout.resourceUsageWords
            }
        ) { cursor, position, words in
            if words == 1 {
                position[0] = RecordLayout.header(kind: RecordLayout.end, timestamp: FastRecord.timestamp(cursor))
            } else {
                var usage = cstrobe_rusage()
                cstrobe_thread_rusage(&usage)
                position[0] = RecordLayout.header(
                    kind: RecordLayout.end | RecordLayout.withResourceUsage, timestamp: FastRecord.timestamp(cursor))
                RecordLayout.store(usage, at: position + 1)
                cursor.pointee.rusage_levels &= ~bit
            }
            cursor.pointee.categorized_levels &= ~bit
            cursor.pointee.depth = level
        }
        if written { return }
        recordEnd()
    }

    /// Runs `body` inside an interval and returns its result.
    ///
    /// The interval ends when `body` returns or throws.
    @inlinable @discardableResult
    public static func interval<Result, Failure: Error>(
        _ name: Name,
        capturing: Capture = [],
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if capturing.isEmpty { begin(name) } else { begin(name, capturing: capturing) }
        defer { end() }
        return try body()
    }

    /// Runs asynchronous `body` inside an interval and returns its result.
    ///
    /// The interval may end on another thread than the one it began on, so it
    /// is recorded on an async track of its own, where it shows as one
    /// unbroken interval.
    ///
    /// Async intervals nest by themselves: the interval belongs under the
    /// innermost async interval open in the current task, and async
    /// intervals begun in `body`, across `await`s and in child tasks
    /// (`async let`, task groups, `Task {}`), belong under it. Intervals
    /// opened with ``begin(_:)`` stay on their thread's track.
    @inlinable @discardableResult
    public static func interval<Result, Failure: Error>(
        _ name: Name,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        guard cstrobe_load_generation() != 0 else { return try await body() }
        let interval = recordAsyncBegin(name, arguments: [:])
        defer { interval.end() }
        return try await withInnermostInterval(interval.id, isolation: isolation, body)
    }

    // MARK: Async intervals

    /// Opens an interval that may end on another thread.
    ///
    /// Call ``AsyncInterval/end(arguments:)`` on the returned value, from any thread.
    /// The interval nests under the innermost async interval open in the
    /// current task, if any (see ``interval(_:isolation:_:)``).
    @inlinable
    public static func beginAsync(
        _ name: Name, arguments: KeyValuePairs<StaticString, ArgumentValue> = [:]
    ) -> AsyncInterval {
        guard cstrobe_load_generation() != 0 else { return AsyncInterval(id: 0) }
        return recordAsyncBegin(name, arguments: arguments)
    }

    /// Opens an interval that may end on another thread, nested under the
    /// innermost async interval open in the current task, if any, with flows,
    /// arguments whose keys are known at run time, a name that may change at
    /// its end, or a start in the past.
    ///
    /// ```swift
    /// let request = Trace.beginAsync(Trace.Name("HTTP GET"), renamable: true)
    /// // ...
    /// request.end(renamedTo: Trace.Name("GET /photos/:id"))
    /// ```
    ///
    /// The parameters are those of
    /// ``beginAsync(_:parent:flow:terminatingFlow:arguments:renamable:startedAgo:)``,
    /// which takes the parent explicitly.
    @inlinable
    public static func beginAsync(
        _ name: Name,
        flow: Flow? = nil,
        terminatingFlow: Flow? = nil,
        arguments: [Argument] = [],
        renamable: Bool = false,
        startedAgo: Duration = .zero
    ) -> AsyncInterval {
        guard cstrobe_load_generation() != 0 else { return AsyncInterval(id: 0) }
        return recordAsyncBeginInTask(
            name, flow: flow, terminatingFlow: terminatingFlow, arguments: arguments, renamable: renamable,
            startedAgo: nanoseconds(startedAgo))
    }

    /// Opens an interval under the current task's innermost async interval.
    @usableFromInline @inline(never)
    static func recordAsyncBeginInTask(
        _ name: Name, flow: Flow?, terminatingFlow: Flow?, arguments: [Argument], renamable: Bool, startedAgo: UInt64
    ) -> AsyncInterval {
        recordAsyncBegin(
            name, parent: AsyncIntervalContext.innermost(), flow: flow, terminatingFlow: terminatingFlow,
            arguments: arguments, renamable: renamable, startedAgo: startedAgo)
    }

    /// Opens an interval that may end on another thread, nested under
    /// `parent`, with flows and arguments whose keys are known at run time.
    ///
    /// The interval gets an async track of its own. With a `parent` that was
    /// recorded in this session, that track is nested under the parent's, so
    /// the viewer shows the intervals as a tree even when siblings overlap.
    ///
    /// - Parameters:
    ///   - name: The interval's name.
    ///   - parent: The interval this one belongs under; nil makes it a root
    ///     even inside another async interval (the task's innermost interval
    ///     is not consulted). To nest under the innermost one, leave the
    ///     argument out.
    ///   - flow: Starts or continues a flow at this interval.
    ///   - terminatingFlow: Ends a flow at this interval.
    ///   - arguments: Values shown with the interval.
    ///   - renamable: Whether the name may still change when the interval
    ///     ends, with ``AsyncInterval/end(renamedTo:arguments:endedAgo:)``.
    ///     Such an interval is written to the trace when it ends rather than
    ///     when it begins, with the time it began; one still open when the
    ///     session stops is written then, under its first name, without an
    ///     end. At most 16,384 are held at once: past that, the oldest are
    ///     written early under their first names, and a later new name is
    ///     recorded as the argument `name`.
    ///   - startedAgo: How long before this call the interval began, for
    ///     work timed before it was recorded. An interval that began in the
    ///     past is written when it ends, as a renamable one is.
    @inlinable
    public static func beginAsync(
        _ name: Name,
        parent: AsyncInterval?,
        flow: Flow? = nil,
        terminatingFlow: Flow? = nil,
        arguments: [Argument] = [],
        renamable: Bool = false,
        startedAgo: Duration = .zero
    ) -> AsyncInterval {
        guard cstrobe_load_generation() != 0 else { return AsyncInterval(id: 0) }
        return recordAsyncBegin(
            name, parent: parent?.id ?? 0, flow: flow, terminatingFlow: terminatingFlow, arguments: arguments,
            renamable: renamable, startedAgo: nanoseconds(startedAgo))
    }

    /// Whole nanoseconds in `duration`; 0 when it is negative.
    @inlinable
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max / 2 }
        return whole &+ UInt64(attoseconds / 1_000_000_000)
    }

    // MARK: Instants and counters

    /// Marks a moment on the calling thread.
    @inlinable
    public static func instant(
        _ name: Name, arguments: KeyValuePairs<StaticString, ArgumentValue> = [:]
    ) {
        guard cstrobe_load_generation() != 0 else { return }
        recordInstant(name, arguments: arguments)
    }

    /// Marks a moment on the calling thread, with arguments whose keys are
    /// known at run time.
    @inlinable
    public static func instant(_ name: Name, arguments: [Argument]) {
        guard cstrobe_load_generation() != 0 else { return }
        recordInstant(name, arguments: arguments)
    }

    /// Records an integer value on the counter track `name`: an `Int`,
    /// `Int64` or any other integer, clamped to `Int64`'s range.
    @inlinable @inline(__always)
    public static func counter(_ name: Name, _ value: some BinaryInteger, unit: CounterUnit = .count) {
        writeCounter(name, kind: RecordLayout.counterInt, bits: UInt64(bitPattern: Int64(clamping: value)), unit: unit)
    }

    /// Records a floating point value on the counter track `name`.
    @inlinable @inline(__always)
    public static func counter(_ name: Name, _ value: Double, unit: CounterUnit = .count) {
        writeCounter(name, kind: RecordLayout.counterDouble, bits: value.bitPattern, unit: unit)
    }

    @inlinable @inline(__always)
    static func writeCounter(_ name: Name, kind: UInt64, bits: UInt64, unit: CounterUnit) {
        let generation = cstrobe_load_generation()
        if generation == 0 { return }
        let kind = kind | (UInt64(unit.rawValue) << 4)
        let written = FastRecord.write(generation: generation, unlessFlags: FastRecord.slowPathFlags, words: { _ in 3 })
        {
            cursor, position, _ in
            position[0] = RecordLayout.header(kind: kind, timestamp: FastRecord.timestamp(cursor))
            position[1] = name.word
            position[2] = bits
        }
        if written { return }
        recordCounter(name, kind: kind, bits: bits)
    }

    // MARK: Threads

    /// Names the calling thread in traces.
    ///
    /// Threads are named after their system name by default; the name set here
    /// wins and may be longer than the system allows.
    public static func setThreadName(_ name: String) {
        ThreadBuffer.current().rename(name)
    }

    /// Whether a session is recording right now.
    ///
    /// Use it to skip work that only prepares trace arguments.
    @inlinable
    public static var isRecording: Bool { cstrobe_load_generation() != 0 }
}
