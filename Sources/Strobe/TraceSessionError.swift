/// Why a ``TraceSession`` could not start, write or stop.
public enum TraceSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Another session is already recording in this process.
    case alreadyRecording
    /// The trace file could not be created.
    case cannotCreateFile(path: String, reason: String)
    /// Writing the trace file failed; the file holds what was written before.
    case writeFailed(path: String, reason: String)
    /// The configuration is invalid.
    case invalidConfiguration(String)
    /// Signposts the configuration asks for cannot be delivered here, for
    /// example an ftrace marker that cannot be opened.
    case signpostsUnavailable(String)

    /// A sentence that names the problem.
    public var description: String {
        switch self {
        case .alreadyRecording:
            return "a trace session is already recording in this process"
        case .cannotCreateFile(let path, let reason):
            return "cannot create trace file \(path): \(reason)"
        case .writeFailed(let path, let reason):
            return "cannot write trace file \(path): \(reason)"
        case .invalidConfiguration(let problem):
            return "invalid trace configuration: \(problem)"
        case .signpostsUnavailable(let problem):
            return "signposts unavailable: \(problem)"
        }
    }
}
