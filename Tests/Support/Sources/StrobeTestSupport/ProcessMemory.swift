import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The memory of the test process, for tests that check what the SDK keeps.
public enum ProcessMemory {
    /// The resident memory of this process in bytes, from `/proc/self/statm`,
    /// or 0 where it cannot be read.
    public static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Whether ThreadSanitizer runs in this process: its shadow memory
    /// makes resident memory meaningless as a measure of ours.
    public static let isThreadSanitized = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
}
