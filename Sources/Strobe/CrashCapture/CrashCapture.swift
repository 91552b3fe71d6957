import CStrobe
import StrobeEncoding
import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TraceConfiguration {
    /// Where a session writes its buffers when the process dies of a fatal
    /// signal; `strobe recover` turns the file into a trace.
    ///
    /// While the session runs, a handler for SIGSEGV, SIGBUS, SIGILL, SIGABRT,
    /// SIGFPE and SIGTRAP (Swift's `fatalError` and failed preconditions trap
    /// with SIGILL on x86-64 and SIGTRAP on arm64) writes every recording
    /// thread's buffer, the text of the names its events use, the clock
    /// readings and the signal to ``path``. The handler runs on an alternate
    /// signal stack, so a stack overflow is caught too, and uses only
    /// async-signal-safe calls on memory set aside when the session starts:
    /// recording costs nothing more.
    ///
    /// ```swift
    /// var configuration = TraceConfiguration()
    /// configuration.whenBufferFull = .overwriteOldest
    /// configuration.crashCapture = .init(path: "/var/tmp/app.strobe-crash")
    /// let session = try TraceSession.start(configuration)
    /// // after a crash: strobe recover /var/tmp/app.strobe-crash -o crash.pftrace
    /// ```
    ///
    /// It suits a flight recorder (``FullBufferPolicy/overwriteOldest``),
    /// whose rings hold the last moments and reach no file otherwise. With
    /// ``FullBufferPolicy/discardNewest`` the file holds each thread's chunks
    /// not yet taken by the background writer and its current chunk, whose
    /// start the writer may have appended already: the recovered trace then
    /// overlaps the end of the streamed one.
    ///
    /// **Stack overflows.** The handler runs on an alternate signal stack,
    /// which a thread needs to catch the overflow of its own stack. Such a
    /// stack belongs to one thread and only that thread can install it
    /// (`sigaltstack`), so Strobe installs one on the thread that starts the
    /// session and on each thread when it first records while the session
    /// runs. It does not interrupt other threads to make them install one:
    /// the signal that would do it cuts their blocking system calls short
    /// with `EINTR`. A thread that has recorded nothing in the session and
    /// overflows its stack therefore ends the process without the file
    /// (its other faults are caught). Any event gives a thread its stack:
    /// record one (`Trace.instant`, say) early in the threads you start, or
    /// have them set up their own alternate stack, which Strobe keeps.
    ///
    /// **Other crash handlers.** The session installs its handler when it
    /// starts and keeps the action each signal had before. On a crash it
    /// writes the file, puts that action back and hands the signal on: a
    /// fault repeats when the handler returns, a sent signal (`abort`,
    /// `raise`) is sent again with the same information, so the crash
    /// reporter installed before the session (or the system's default
    /// action, a core dump) runs as if Strobe were not there. A handler
    /// installed after the session starts runs first and sees Strobe's only
    /// if it calls the action it replaced, as crash reporters do; Strobe
    /// then calls the action it replaced in turn. When the session stops,
    /// each signal gets its earlier action back unless another handler was
    /// installed over Strobe's since; then Strobe's stays reachable from it,
    /// writes nothing, and passes the signal on.
    ///
    /// Every delivery of these signals is taken as fatal: a program that
    /// handles SIGSEGV to recover from it should not turn this on.
    public struct CrashCapture: Sendable, Hashable {
        /// The crash file to write; it is created (or replaced) only when a
        /// crash happens.
        public var path: String

        /// Crash capture to the file at `path`.
        public init(path: String) {
            self.path = path
        }
    }
}

/// Installs and removes the fatal-signal handler (`CStrobeCrash.c`) for a
/// session, and keeps its view of each thread's chunks current.
enum CrashHandler {
    /// Checks that the crash file can be created where `capture` says,
    /// without creating it.
    static func validate(_ capture: TraceConfiguration.CrashCapture) throws(TraceSessionError) {
        guard !capture.path.isEmpty else { throw .invalidConfiguration("crashCapture: the path is empty") }
        var directory = capture.path
        if let slash = directory.lastIndex(of: "/") {
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
        } else {
            directory = "."
        }
        if access(directory, W_OK) != 0 {
            throw .cannotCreateFile(path: capture.path, errno: errno)
        }
    }

    /// Arms the handler for `core`, before it records.
    static func install(_ capture: TraceConfiguration.CrashCapture, for core: SessionWriter) throws(TraceSessionError) {
        let first = core.calibration.snapshot().first
        let processName = SessionWriter.processName()
        // A session without metadata writes no METADATA section, so its
        // crash file keeps the first layout's version.
        let sessionMetadata = SessionMetadata(core.configuration)
        let metadata = sessionMetadata.isDefault ? [] : sessionMetadata.serialized
        let result = capture.path.withCString { path in
            processName.withCString { name in
                metadata.withUnsafeBufferPointer { metadata in
                    var config = cstrobe_crash_config(
                        path: path, process_name: name,
                        base_raw: core.calibration.base, base_boottime_ns: first?.boottime ?? 0,
                        buffer_bytes: core.bufferSize, chunk_words: UInt64(core.pool.chunkWords),
                        metadata: metadata.baseAddress, metadata_bytes: UInt64(metadata.count))
                    return cstrobe_crash_install(&config)
                }
            }
        }
        if result != 0 {
            throw TraceSessionError(
                kind: .invalidConfiguration, errno: result,
                problem: "crashCapture: cannot install the crash handler: \(ErrnoText.message(result))")
        }
    }

    /// Disarms the handler once every thread is detached.
    static func uninstall() {
        cstrobe_crash_uninstall()
    }

    /// Sealed chunks a thread's mirror holds beyond the session's ring, for
    /// ends that take memory past the limit.
    static let spareChunks = 64
}
