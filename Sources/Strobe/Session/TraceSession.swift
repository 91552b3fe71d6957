import CStrobe
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A recording of the process's ``Trace`` calls, from ``start(_:)`` to
/// ``stop()``.
///
/// One session records at a time. While it runs, every thread that calls
/// ``Trace`` records into a buffer of its own; a background thread appends
/// the events to the trace file as it goes, so the file stays readable up to
/// its last write even if the process dies.
///
/// ```swift
/// let session = try TraceSession.start(TraceConfiguration(outputPath: "run.pftrace"))
/// runTheApp()
/// try session.stop()
/// ```
///
/// ``record(_:_:)-(_,()->Result)`` does the same around a closure, and
/// throws the stop's error rather than dropping it.
///
/// Open the file in the Perfetto UI (ui.perfetto.dev) or read it with
/// `strobe summarize`.
public final class TraceSession: Sendable {
    /// The environment variable that makes ``startFromEnvironment()`` record
    /// to the file it names. `strobe run` sets it for each child process.
    package static let outputEnvironmentVariable = "STROBE_TRACE_OUTPUT"

    /// The configuration the session runs with.
    package let configuration: TraceConfiguration

    /// Whether the sampling draw chose this session to record. An unsampled
    /// session records nothing and writes no file.
    public let isSampled: Bool

    private let core: SessionWriter?
    private let stopped = Atomic<Bool>(false)

    private static let lifecycle = SanitizedMutex<Void>(())

    private init(configuration: TraceConfiguration, core: SessionWriter?) {
        self.configuration = configuration
        self.core = core
        isSampled = core != nil
    }

    /// Starts recording.
    ///
    /// - Throws: ``TraceSessionError/alreadyRecording`` when another session
    ///   runs, or an error naming the file that could not be created.
    public static func start(_ configuration: TraceConfiguration) throws(TraceSessionError) -> TraceSession {
        guard configuration.samplingProbability >= 0, configuration.samplingProbability <= 1 else {
            throw .invalidConfiguration(
                "samplingProbability must be between 0 and 1, not \(configuration.samplingProbability)")
        }
        guard configuration.bufferSizePerThread > 0 else {
            throw .invalidConfiguration("bufferSizePerThread must be positive")
        }
        if let problem = CategorySelection.problem(with: configuration.categories) {
            throw .invalidConfiguration("categories: \(problem)")
        }
        if let problem = configuration.metadata.problem { throw .invalidConfiguration(problem) }
        if let problem = configuration.flightRecorderProblem() { throw problem }
        if let profile = configuration.cpuProfile {
            if let problem = profile.problem { throw .invalidConfiguration(problem) }
            guard configuration.outputPath != nil || configuration.flightRecorder != nil else {
                throw .invalidConfiguration(
                    "cpuProfile needs an outputPath or a flightRecorder: somewhere to write the samples")
            }
        }
        let result: Result<TraceSession, TraceSessionError> = lifecycle.withLock { _ in
            if cstrobe_load_generation() != 0 { return .failure(.alreadyRecording) }
            let sampled =
                configuration.samplingProbability >= 1
                || Double.random(in: 0..<1) < configuration.samplingProbability
            guard sampled else { return .success(TraceSession(configuration: configuration, core: nil)) }
            do throws(TraceSessionError) {
                let core = try SessionWriter(configuration: configuration)
                core.activate()
                CategoryRegistry.shared.activate(
                    generation: core.generation, selection: CategorySelection(patterns: configuration.categories))
                return .success(TraceSession(configuration: configuration, core: core))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Starts the session the environment asks for, and returns nil when it
    /// asks for none.
    ///
    /// Call it at the top of `main` so that `strobe run` can trace the
    /// process (it sets `STROBE_TRACE_OUTPUT` for each child process it
    /// launches). A session starts when `STROBE_TRACE_OUTPUT`,
    /// `STROBE_CRASH_CAPTURE` or a `STROBE_FLIGHT_RECORDER_` variable is set:
    ///
    /// - `STROBE_TRACE_OUTPUT`: the trace file (``TraceConfiguration/outputPath``).
    /// - `STROBE_TRACE_RUSAGE`: interval names that capture rusage (`*` for
    ///   all), comma separated.
    /// - `STROBE_TRACE_SIGNPOSTS`: signposts to turn on (`probes`,
    ///   `ftrace-marker`, `os-signposts` or `all`, comma separated).
    /// - `STROBE_TRACE_CATEGORIES`: the category patterns to record (comma
    ///   separated, see ``TraceConfiguration/categories``).
    /// - `STROBE_FLIGHT_RECORDER_DIR`: turns the
    ///   ``TraceConfiguration/flightRecorder`` on, dumping into this
    ///   directory, and records into rings
    ///   (``TraceConfiguration/FullBufferPolicy/overwriteOldest``). With it:
    ///   `STROBE_FLIGHT_RECORDER_BEFORE`, `_AFTER` and `_SPACING` (durations
    ///   such as `10s` or `500ms`:
    ///   ``TraceConfiguration/FlightRecorder/before``,
    ///   ``TraceConfiguration/FlightRecorder/after``,
    ///   ``TraceConfiguration/FlightRecorder/minimumSpacing``),
    ///   `_MAX_FILES` and `_MAX_BYTES` (whole numbers), and `_TRIGGERS`,
    ///   comma separated: `interval:NAME>DURATION`, `counter:NAME>NUMBER` or
    ///   `counter:NAME<NUMBER`, as in
    ///   `interval:frame>33ms,counter:queue.depth>100` (names holding a comma
    ///   cannot be written so).
    /// - `STROBE_TRACE_METADATA`: the ``TraceConfiguration/metadata``, comma
    ///   separated `KEY=VALUE` pairs: `app.name`, `app.version`, `app.build`,
    ///   `device.model` and `os.version` set those fields, any other key is a
    ///   dimension (`app.version=5.2,device.class=mid`; values holding a comma
    ///   cannot be written so).
    /// - `STROBE_CPU_PROFILE`: the ``TraceConfiguration/cpuProfile``, a rate
    ///   such as `999hz`, optionally followed by `,timer` for the CPU-time
    ///   timer.
    /// - `STROBE_CRASH_CAPTURE`: the path of
    ///   ``TraceConfiguration/crashCapture``'s file. Without
    ///   `STROBE_TRACE_OUTPUT` the session records into rings, which reach a
    ///   file only on a crash (or in a flight-recorder dump).
    ///
    /// - Throws: ``TraceSessionError/invalidConfiguration(_:)`` naming the
    ///   variable and its value when one cannot be read: an unknown signpost
    ///   or `STROBE_FLIGHT_RECORDER_` setting, a malformed duration, number,
    ///   trigger or category pattern, or a flight-recorder setting without
    ///   `STROBE_FLIGHT_RECORDER_DIR`.
    public static func startFromEnvironment() throws(TraceSessionError) -> TraceSession? {
        var environment: [String: String] = [:]
        for name in [
            outputEnvironmentVariable, "STROBE_TRACE_RUSAGE", TraceConfiguration.signpostsEnvironmentVariable,
            TraceConfiguration.categoriesEnvironmentVariable, TraceMetadata.environmentVariable,
            TraceConfiguration.CPUProfile.environmentVariable,
        ] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        guard let configuration = try TraceConfiguration.fromEnvironment(environment) else { return nil }
        return try start(configuration)
    }

    /// Stops recording and finishes the trace file.
    ///
    /// Calling it again does nothing.
    public func stop() throws(TraceSessionError) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing), let core else { return }
        let result: Result<Void, TraceSessionError> = Self.lifecycle.withLock { _ in
            do throws(TraceSessionError) {
                CategoryRegistry.shared.deactivate()
                try core.deactivate()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Changes the categories the session records, while it runs: names or
    /// patterns as in ``TraceConfiguration/categories``. Takes effect for
    /// events that begin after the call; does nothing once stopped.
    ///
    /// - Throws: ``TraceSessionError/invalidConfiguration(_:)`` naming a
    ///   pattern that is empty or holds a comma.
    public func setCategories(_ patterns: [String]) throws(TraceSessionError) {
        if let problem = CategorySelection.problem(with: patterns) {
            throw .invalidConfiguration("categories: \(problem)")
        }
        guard let core, !stopped.load(ordering: .acquiring) else { return }
        CategoryRegistry.shared.select(CategorySelection(patterns: patterns), generation: core.generation)
    }

    /// Writes what the buffers hold now to the file at `path`, without
    /// stopping: the flight recorder's "save the last moments".
    ///
    /// Meant for ``TraceConfiguration/FullBufferPolicy/overwriteOldest``
    /// sessions; with the default policy the buffers hold only what the
    /// background writer has not written yet.
    public func dump(to path: String) throws(TraceSessionError) {
        guard let core, !stopped.load(ordering: .acquiring) else { return }
        try core.writeSnapshot(to: path)
    }

    /// The session's background thread (the writer), nil for an unsampled
    /// session. `StrobePerf` leaves its allocations and retains out of a
    /// measure block's counts.
    package var backgroundThread: pthread_t? {
        core?.writerThread
    }

    /// The kernel thread id of the session's background writer, once it has
    /// started: its CPU samples are the session's own work, not the app's.
    package var backgroundThreadID: Int32? {
        core?.writerThreadID
    }

    /// Whether the background writer has finished starting up and gone to
    /// wait for its first turn; `StrobePerf` waits for it before a counted
    /// measure block, so that the start-up is not counted.
    package var backgroundThreadHasWaited: Bool {
        core?.writerHasWaited ?? true
    }

    /// Counts of what the session has recorded and lost so far.
    public struct Statistics: Sendable, Hashable {
        /// Events written into thread buffers.
        public var recordedEvents: UInt64 = 0
        /// Events discarded because a thread's buffer was full.
        public var discardedEvents: UInt64 = 0
        /// Events a ring buffer (``TraceConfiguration/FullBufferPolicy/overwriteOldest``)
        /// no longer holds because newer ones took their place: exactly the
        /// recorded events a snapshot or the stop's trace lacks. Chunks a
        /// flight-recorder dump took go back to the ring once the dump is
        /// written; those the ring has no room for by then count here.
        public var overwrittenEvents: UInt64 = 0
        /// `end` calls with no open interval, ignored.
        public var unmatchedEnds: UInt64 = 0
        /// Threads that recorded.
        public var threads = 0
        /// Bytes appended to the trace file.
        public var bytesWritten: UInt64 = 0
        /// Dumps the flight recorder wrote (see
        /// ``TraceConfiguration/flightRecorder``).
        public var triggeredDumps: UInt64 = 0
        /// Triggers counted but not dumped: they fired while a dump was
        /// recording or being written, or sooner than
        /// ``TraceConfiguration/FlightRecorder/minimumSpacing`` after the
        /// last dumped one.
        public var suppressedTriggers: UInt64 = 0
        /// Dumps that could not be written; ``lastDumpError`` says why.
        public var failedDumps: UInt64 = 0
        /// Dumps accepted and not yet written (0 or 1): the session is
        /// recording the window after the trigger, or writing the file. An
        /// app about to stop can keep working until it is 0, so the dump
        /// holds the whole window it asked for rather than what the stop
        /// leaves.
        public var dumpsInProgress = 0
        /// CPU samples written (see ``TraceConfiguration/cpuProfile``).
        public var cpuSamples: UInt64 = 0
        /// CPU samples lost: a thread's sample ring was full before the
        /// background writer drained it.
        public var lostCPUSamples: UInt64 = 0
    }

    /// Dumps the flight recorder now: what the rings hold before this
    /// moment and what the session records for
    /// ``TraceConfiguration/FlightRecorder/after`` more, into a new file in
    /// the flight recorder's directory, with `reason` in its name and in
    /// the trace.
    ///
    /// Returns at once: the background writer does the work. Returns false,
    /// and counts the trigger in ``Statistics/suppressedTriggers``, when a
    /// dump is under way or the last one was less than
    /// ``TraceConfiguration/FlightRecorder/minimumSpacing`` ago; also false
    /// when the session has no flight recorder or has stopped.
    ///
    /// ```swift
    /// if payment.failed { session.trigger("checkout failed") }
    /// ```
    @discardableResult
    public func trigger(_ reason: String) -> Bool {
        guard let core, let dumps = core.dumps, !stopped.load(ordering: .acquiring) else { return false }
        let thread = ThreadBuffer.current().threadID
        let accepted = dumps.offer(FiredTrigger(reason: reason, boottime: cstrobe_boottime_ns(), threadID: thread))
        if accepted { core.wakeWriter() }
        return accepted
    }

    /// Why the flight recorder's last failed dump failed, or nil when none
    /// has failed.
    public var lastDumpError: TraceSessionError? {
        core?.dumps?.lastError
    }

    /// CPU time (user and system) the session's background thread has used
    /// so far: the writer that encodes and appends events, and samples the
    /// process when ``TraceConfiguration/processSamplingInterval`` asks.
    ///
    /// Subtract it from the process's CPU time to leave out the cost of
    /// tracing itself, as `StrobePerf` does. Zero for an unsampled session.
    package var backgroundCPUTime: Duration {
        guard let core else { return .zero }
        let nanoseconds = Self.lifecycle.withLock { _ in core.writerCPUTime }
        return .nanoseconds(Int64(clamping: nanoseconds))
    }

    /// Counts of what the session has recorded and lost so far.
    public var statistics: Statistics {
        core?.statistics() ?? Statistics()
    }
}
