import CStrobeCounting
import Foundation

/// Starts a suite's counting child (under an engine that relaunches it:
/// callgrind or QEMU) and waits for it.
enum CountingChild {
    /// What the child's environment fixes, so that nothing but the code
    /// moves a count from one process of a build to the next: Swift's hash
    /// seed (a dictionary's probes), the dynamic linker's binding of every
    /// symbol at start-up rather than at its first call (which a measure
    /// block could make), and glibc's allocator thresholds at their
    /// defaults (given, they stop the allocator from raising its mmap
    /// threshold as blocks are freed, which moves later allocations between
    /// the heap and mmap by history).
    static let fixedEnvironment = [
        "SWIFT_DETERMINISTIC_HASHING": "1",
        "LD_BIND_NOW": "1",
        "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072:"
            + "glibc.malloc.top_pad=131072",
    ]

    /// Runs `executable` with `arguments` and `environment`, plus
    /// ``fixedEnvironment``, without address-space randomization, and
    /// returns its exit status (128 + the signal when a signal ended it).
    static func run(_ executable: String, arguments: [String], environment: [String: String]) throws -> Int32 {
        var environment = environment
        environment.merge(fixedEnvironment) { _, fixed in fixed }
        // Inherited by every process this one starts from now on: the child,
        // after which the suite's process exits.
        _ = cstrobe_counting_fix_layout_for_children()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = arguments
        child.environment = environment
        try child.run()
        child.waitUntilExit()
        if child.terminationReason == .uncaughtSignal { return 128 + child.terminationStatus }
        return child.terminationStatus
    }
}
