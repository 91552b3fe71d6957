import StrobeFormatting

/// A problem in a trace file, with where it is.
///
/// The description reads `PATH: byte OFFSET: PROBLEM`, so a person can find
/// the spot with a hex viewer; a failed system call adds ` (errno N)`.
public struct TraceReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file's path (or the name given to bytes read from memory).
    public var path: String
    /// The byte offset where the problem starts.
    public var offset: Int
    /// What is wrong.
    public var problem: String
    /// The `errno` of the system call that failed (opening, reading or
    /// writing the file), when one did.
    public var errno: Int32?

    /// A problem at `offset` in the file at `path`; `errno` when a system
    /// call failed.
    public init(path: String, offset: Int, problem: String, errno: Int32? = nil) {
        self.path = path
        self.offset = offset
        self.problem = problem
        self.errno = errno
    }

    /// `PATH: byte OFFSET: PROBLEM`, then ` (errno N)` when a system call
    /// failed; a file that could not be opened or read at all is named
    /// without a byte (`PATH: cannot open: No such file or directory`).
    public var description: String {
        if errno != nil, offset == 0 { return "\(path): \(problem)" + ErrnoText.suffix(errno) }
        return "\(path): byte \(offset): \(problem)" + ErrnoText.suffix(errno)
    }
}
