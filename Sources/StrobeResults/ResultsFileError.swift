import Foundation
import StrobeFormatting

/// Why a results file could not be read or written, with the file and, when
/// a system call failed, its `errno`.
///
/// The description reads `PATH: PROBLEM`, then ` (errno N)` when a system
/// call failed.
public struct ResultsFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What went wrong.
    public var problem: String
    /// The `errno` of the system call that failed, when one did.
    public var errno: Int32?

    /// A problem with the file at `path`.
    public init(path: String, problem: String, errno: Int32? = nil) {
        self.path = path
        self.problem = problem
        self.errno = errno
    }

    /// `PATH: PROBLEM`, then ` (errno N)` when a system call failed.
    public var description: String { "\(path): \(problem)" + ErrnoText.suffix(errno) }

    /// The POSIX error code under a Foundation file error, if there is one.
    static func posixCode(of error: any Error) -> Int32? {
        var error = error as NSError
        if error.domain != NSPOSIXErrorDomain, let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error {
            error = underlying as NSError
        }
        return error.domain == NSPOSIXErrorDomain ? Int32(error.code) : nil
    }
}
