import CStrobeCounting
import Foundation
import StrobeProcessRunner

#if canImport(Glibc)
import Glibc
#endif

/// Runs the suite again as a child process under QEMU's user-mode emulator
/// with Strobe's counting plugin (``EmulationPlugin``), for `--instructions
/// emulated`, and waits for it.
///
/// The emulator translates the suite's machine code block by block and runs
/// it about 20 times slower than natively where the code is integer work and
/// over 100 times where it is floating point, which it emulates in software
/// (a simulation under callgrind measures 20 to 100 times slower whatever
/// the code, and names functions): every guest instruction is
/// counted, and a measure block's start and end are marked by a system call
/// the plugin watches for. The counts are those of the emulated CPU, so they
/// compare only with counts emulated the same way; like a simulated one, the
/// process records counts only. The child hashes deterministically
/// (`SWIFT_DETERMINISTIC_HASHING=1`).
enum EmulatedLaunch {
    /// The environment variable through which the launch tells the child
    /// where the plugin writes its counts.
    static let countsVariable = "STROBE_EMULATION_COUNTS"

    /// QEMU's user-mode emulator for this machine's architecture.
    static var emulatorName: String { InstructionCounting.emulatorName }

    /// Why the emulation cannot run here, or nil when it can.
    static func problem(environment: [String: String]) -> String? {
        guard ProcessRunner.executable(named: emulatorName, environment: environment) != nil else {
            return "QEMU's user-mode emulator \(emulatorName) is not installed (apt-get install qemu-user)"
        }
        guard EmulationPlugin.compiler(environment: environment) != nil else {
            return "no C compiler (cc, clang or gcc) to build the emulator's counting plugin"
        }
        return nil
    }

    /// Whether this process is the emulated child a launch started.
    static func isChild(environment: [String: String]) -> Bool {
        environment[countsVariable].map { !$0.isEmpty } ?? false
    }

    /// Runs the suite with `arguments` under the emulator and returns its
    /// exit status; throws when the child cannot be started.
    static func run(arguments: [String], environment: [String: String]) throws -> Int32 {
        guard let emulator = ProcessRunner.executable(named: emulatorName, environment: environment) else {
            throw InstructionCountError(
                problem: "QEMU's user-mode emulator \(emulatorName) is not installed (apt-get install qemu-user)")
        }
        let plugin = try EmulationPlugin.library(environment: environment)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let counts = ScratchFiles.base + "/strobe-emulation-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).counts"
        defer { unlink(counts) }
        var childEnvironment = environment
        childEnvironment[countsVariable] = counts
        return try CountingChild.run(
            emulator, arguments: ["-plugin", "\(plugin),out=\(counts)", executable] + arguments,
            environment: childEnvironment)
    }
}

/// Starts a suite's counting child (simulated or emulated) and waits for it.
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
