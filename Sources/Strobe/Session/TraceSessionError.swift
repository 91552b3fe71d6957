import StrobeEncoding
import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a ``TraceSession`` could not start, write or stop.
///
/// Every error has a ``kind``; one about a file names its ``path`` and, when
/// a system call failed, its ``errno``. The description is one sentence:
///
/// ```
/// cannot create trace file /tmp/x/run.pftrace: No such file or directory (errno 2)
/// ```
///
/// ```swift
/// do {
///     try TraceSession.record(configuration) { work() }
/// } catch let error as TraceSessionError where error.kind == .writeFailed {
///     log("trace cut short: \(error)")
/// }
/// ```
public struct TraceSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for code that handles some errors differently.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) { self.name = name }

        /// Another session is already recording in this process.
        public static let alreadyRecording = Kind("already recording")
        /// The trace file could not be created.
        public static let cannotCreateFile = Kind("cannot create file")
        /// Writing the trace file failed; the file holds what was written
        /// before.
        public static let writeFailed = Kind("write failed")
        /// The configuration is invalid.
        public static let invalidConfiguration = Kind("invalid configuration")
        /// Signposts the configuration asks for cannot be delivered here, for
        /// example an ftrace marker that cannot be opened.
        public static let signpostsUnavailable = Kind("signposts unavailable")

        /// The kind's name.
        public var description: String { name }
    }

    /// What went wrong.
    public var kind: Kind
    /// The file concerned, when there is one.
    public var path: String?
    /// The `errno` of the system call that failed, when one did.
    public var errno: Int32?
    /// What is wrong, in words, without the path and errno.
    public var problem: String

    /// An error of `kind` about `path`.
    package init(kind: Kind, path: String? = nil, errno: Int32? = nil, problem: String) {
        self.kind = kind
        self.path = path
        self.errno = errno
        self.problem = problem
    }

    /// A sentence that names the problem, the file and the errno.
    public var description: String {
        var parts: [String] = []
        switch kind {
        case .cannotCreateFile: parts.append("cannot create trace file" + (path.map { " " + $0 } ?? ""))
        case .writeFailed: parts.append("cannot write trace file" + (path.map { " " + $0 } ?? ""))
        case .invalidConfiguration: parts.append("invalid trace configuration")
        case .signpostsUnavailable: parts += ["signposts unavailable"] + (path.map { [$0] } ?? [])
        default: if let path { parts.append(path) }
        }
        if !problem.isEmpty { parts.append(problem) }
        return parts.joined(separator: ": ") + ErrnoText.suffix(errno)
    }

    // MARK: The errors the SDK throws

    /// Another session is already recording in this process.
    package static let alreadyRecording = TraceSessionError(
        kind: .alreadyRecording, problem: "a trace session is already recording in this process")

    /// `path` could not be created; `errno` says why.
    package static func cannotCreateFile(path: String, errno: Int32) -> TraceSessionError {
        TraceSessionError(kind: .cannotCreateFile, path: path, errno: errno, problem: ErrnoText.message(errno))
    }

    /// The error of a trace file that could not be created or written.
    package init(_ error: TraceFileError) {
        switch error.operation {
        case .create: self = .cannotCreateFile(path: error.path, errno: error.errno)
        case .write: self = .writeFailed(path: error.path, errno: error.errno)
        }
    }

    /// Writing `path` failed; `errno` says why.
    package static func writeFailed(path: String, errno: Int32) -> TraceSessionError {
        TraceSessionError(kind: .writeFailed, path: path, errno: errno, problem: ErrnoText.message(errno))
    }

    /// The configuration is invalid: `problem` names the setting.
    package static func invalidConfiguration(_ problem: String) -> TraceSessionError {
        TraceSessionError(kind: .invalidConfiguration, problem: problem)
    }

    /// Signposts cannot be delivered: `problem` says why.
    package static func signpostsUnavailable(
        _ problem: String, path: String? = nil, errno: Int32? = nil
    ) -> TraceSessionError {
        TraceSessionError(kind: .signpostsUnavailable, path: path, errno: errno, problem: problem)
    }
}
