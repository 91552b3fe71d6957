import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a perf test's iteration failed: the runner's one error.
///
/// ``ProcessRunner`` and ``PerfRunner`` end a test at its first failing
/// iteration and record the error's description in
/// ``PerfTestResult/error`` (the results file keeps the text):
///
/// ```
/// iteration 3: the child crashed with signal 11 (Segmentation fault)
/// ```
public struct PerfTestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) { self.name = name }

        /// The command could not be started (or waited for).
        public static let cannotStart = Kind("cannot start")
        /// The child was killed by a signal.
        public static let crashed = Kind("crashed")
        /// The child exited with a non-zero status.
        public static let exited = Kind("exited")
        /// The child ran past the timeout and was stopped.
        public static let timedOut = Kind("timed out")
        /// The child wrote no trace (or an empty one) to the path it was given.
        public static let noTrace = Kind("no trace")
        /// A test's setup, measure or teardown block threw.
        public static let blockFailed = Kind("block failed")

        /// The kind's name.
        public var description: String { name }
    }

    /// What went wrong.
    public var kind: Kind
    /// The command, for a child process.
    public var command: String?
    /// The file concerned (the trace the child should have written).
    public var path: String?
    /// The `errno` of the system call that failed, when one did.
    public var errno: Int32?
    /// The iteration that failed, counted from 0 with warm-ups first, when
    /// known.
    public var iteration: Int?
    /// Whether that iteration was a warm-up.
    public var isWarmup = false
    /// What is wrong, in words.
    public var problem: String

    /// An error of `kind`.
    public init(
        kind: Kind, command: String? = nil, path: String? = nil, errno: Int32? = nil, iteration: Int? = nil,
        problem: String
    ) {
        self.kind = kind
        self.command = command
        self.path = path
        self.errno = errno
        self.iteration = iteration
        self.problem = problem
    }

    /// `iteration N: PROBLEM`, with ` (errno N)` when a system call failed.
    public var description: String {
        var text = ""
        if let iteration { text = "iteration \(iteration)\(isWarmup ? " (warm-up)" : ""): " }
        text += problem
        text += ErrnoText.suffix(errno)
        return text
    }

    /// The text ``PerfTestResult/error`` records for `error`, thrown by
    /// `iteration`: a ``PerfTestError`` with the iteration set, or any other
    /// error described the same way.
    package static func describing(_ error: any Error, iteration: Int, warmup: Bool) -> String {
        var failure = error as? PerfTestError ?? PerfTestError(kind: .blockFailed, problem: "\(error)")
        failure.iteration = iteration
        failure.isWarmup = warmup
        return failure.description
    }

    // MARK: The errors the runners throw

    /// `command` could not be started; `errno` says why when it is known.
    public static func cannotStart(command: String, errno: Int32?, reason: String) -> PerfTestError {
        PerfTestError(kind: .cannotStart, command: command, errno: errno, problem: "cannot start \(command): \(reason)")
    }

    /// The child was killed by `signal`.
    public static func crashed(signal: Int32) -> PerfTestError {
        PerfTestError(
            kind: .crashed, problem: "the child crashed with signal \(signal) (\(String(cString: strsignal(signal))))")
    }

    /// The child exited with `status`.
    public static func exited(status: Int32) -> PerfTestError {
        PerfTestError(kind: .exited, problem: "the child exited with status \(status)")
    }

    /// The child ran past `timeout` and was stopped.
    public static func timedOut(seconds timeout: Double) -> PerfTestError {
        PerfTestError(kind: .timedOut, problem: "the child ran past the \(timeout) s timeout and was stopped")
    }

    /// The child wrote no trace to `path`.
    public static func noTrace(path: String) -> PerfTestError {
        PerfTestError(
            kind: .noTrace, path: path,
            problem: "the child wrote no trace to \(path) (does it call TraceSession.startFromEnvironment()?)")
    }

    /// A test's `phase` block (setup, measure, teardown) threw `error`.
    package static func blockFailed(_ phase: String, _ error: any Error) -> PerfTestError {
        PerfTestError(kind: .blockFailed, problem: "\(phase) failed: \(error)")
    }
}
