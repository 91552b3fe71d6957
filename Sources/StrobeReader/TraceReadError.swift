/// A problem in a trace file, with where it is.
///
/// The description reads `FILE: byte OFFSET: PROBLEM`, so a person can find
/// the spot with a hex viewer; a failed system call adds ` (errno N)`.
public struct TraceReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or the name given to bytes read from memory).
    public var file: String
    /// The byte offset where the problem starts.
    public var offset: Int
    /// What is wrong.
    public var problem: String
    /// The `errno` of the system call that failed (opening, reading or
    /// writing the file), when one did.
    public var errno: Int32?

    /// A problem at `offset` in `file`; `errno` when a system call failed.
    public init(file: String, offset: Int, problem: String, errno: Int32? = nil) {
        self.file = file
        self.offset = offset
        self.problem = problem
        self.errno = errno
    }

    /// `FILE: byte OFFSET: PROBLEM`, then ` (errno N)` when a system call
    /// failed.
    public var description: String {
        "\(file): byte \(offset): \(problem)" + (errno.map { " (errno \($0))" } ?? "")
    }
}
