import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where runners write iterations' traces before reading them.
package enum ScratchFiles {
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
}
