import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where runners write iterations' traces before reading them.
public enum ScratchFiles {
    /// A memory file system (`/dev/shm`) when it has a gigabyte free, so the
    /// runner's file work never waits for a disk; the temporary directory
    /// otherwise.
    package static let base: String = {
        #if os(Linux)
        var stats = statvfs()
        if statvfs("/dev/shm", &stats) == 0, UInt64(stats.f_bavail) * UInt64(stats.f_frsize) >= 1 << 30,
            access("/dev/shm", W_OK) == 0
        {
            return "/dev/shm"
        }
        #endif
        return String(NSTemporaryDirectory().reversed().drop { $0 == "/" }.reversed())
    }()

    /// `name` with every character but letters, digits, `-`, `_` and `.`
    /// turned into `-`, to name a file or folder.
    public static func fileSafe(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "-" })
    }
}
