import Foundation
import StrobeStatistics
import StrobeToolFormatting

/// Why samples could not be loaded or compared; `strobe diff` exits with
/// status 2 on these.
public struct DiffError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file involved, or "" when the problem is not one file's.
    public var path: String
    /// What is wrong.
    public var problem: String
    /// The `errno` of the system call that failed reading the file, when one
    /// did.
    public var errno: Int32?

    /// A problem with the file at `path` ("" when it is not one file's).
    public init(path: String, problem: String, errno: Int32? = nil) {
        self.path = path
        self.problem = problem
        self.errno = errno
    }

    /// `FILE: PROBLEM`, or the problem alone, then ` (errno N)` when a system
    /// call failed.
    public var description: String {
        (path.isEmpty ? problem : "\(path): \(problem)") + ErrnoText.suffix(errno)
    }
}
