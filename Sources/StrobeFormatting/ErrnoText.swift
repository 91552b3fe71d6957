#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How every error of Strobe's shows a failed system call's `errno`.
///
/// The message goes in the error's `problem` (`"cannot open: No such file or
/// directory"`), and the number at the end of its description
/// (`" (errno 2)"`), so a reader gets the words and a script the code:
///
/// ```swift
/// let problem = "cannot open: " + ErrnoText.message(errno)
/// let description = "\(path): \(problem)" + ErrnoText.suffix(errno)
/// ```
public enum ErrnoText {
    /// The system's message for `code`, such as `No such file or directory`.
    public static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// ` (errno N)` when a system call failed with `N`, or nothing.
    public static func suffix(_ code: Int32?) -> String {
        code.map { " (errno \($0))" } ?? ""
    }
}
