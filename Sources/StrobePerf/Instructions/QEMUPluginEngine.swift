import CStrobeCounting
import Foundation
import StrobeProcessRunner
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Counts under QEMU's user-mode emulator with Strobe's counting plugin
/// (``EmulationPlugin``), for `--instructions emulated`: the suite runs
/// again as a child process under it, and counts totals only.
///
/// The emulator translates the suite's machine code block by block and runs
/// it about 20 times slower than natively where the code is integer work and
/// over 100 times where it is floating point, which it emulates in software
/// (a simulation under callgrind measures 20 to 100 times slower whatever
/// the code, and names functions): every guest instruction is counted. A
/// window's start and end are marked by a system call the plugin watches
/// for, and at the end the plugin appends the window's count, every
/// thread's, to a file read back at once. The counts are those of the
/// emulated CPU, so they compare only with counts emulated the same way;
/// like a simulated one, the process records counts only, and the session's
/// writer sleeps through the block. The child's environment and layout are
/// fixed (``CountingChild``).
final class QEMUPluginEngine: InstructionEngine {
    static var facts: CountingEngine { .qemuPlugin }

    /// The environment variable through which the launch tells the child
    /// where the plugin writes its counts.
    static let countsVariable = "STROBE_EMULATION_COUNTS"

    /// QEMU's user-mode emulator for this machine's architecture.
    static var emulatorName: String { InstructionCounting.emulatorName }

    /// Windows the plugin has closed in this process.
    private static let windowsClosed = Atomic<Int>(0)

    /// The file the plugin appends each window's count to.
    private let counts: String

    private init(counts: String) {
        self.counts = counts
    }

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
    static func runsUnderTool(environment: [String: String]) -> Bool {
        environment[countsVariable].map { !$0.isEmpty } ?? false
    }

    /// Runs the suite with `arguments` under the emulator and returns its
    /// exit status; throws when the child cannot be started.
    static func launch(arguments: [String], environment: [String: String]) throws -> Int32? {
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

    /// The engine, in the emulated child a launch started.
    static func attach(mode: InstructionCounting, environment: [String: String]) -> InstructionEngineAttachment {
        guard runsUnderTool(environment: environment), let counts = environment[countsVariable] else {
            return .notHere
        }
        return .counting(QEMUPluginEngine(counts: counts))
    }

    func begin(excluding writer: Int32?) {
        cstrobe_emulation_mark(Int32(CSTROBE_EMULATION_BEGIN))
    }

    func end(label: [CChar]) throws -> InstructionReading {
        cstrobe_emulation_mark(Int32(CSTROBE_EMULATION_END))
        let window = Self.windowsClosed.add(1, ordering: .relaxed).newValue
        return InstructionReading(instructions: try count(window: window), profile: nil)
    }

    func abandon() {
        cstrobe_emulation_mark(Int32(CSTROBE_EMULATION_END))
        Self.windowsClosed.add(1, ordering: .relaxed)
    }

    /// The count the plugin appended for the `window`-th window (from 1):
    /// its file holds one decimal line per window closed.
    private func count(window: Int) throws -> UInt64 {
        guard let data = FileManager.default.contents(atPath: counts) else {
            throw InstructionCountError(problem: "the emulator's counting plugin wrote no file \(counts)")
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count >= window else {
            throw InstructionCountError(
                problem: "the emulator's counting plugin wrote \(lines.count) counts to \(counts), "
                    + "window \(window) ended (is the process running under the plugin?)")
        }
        guard let count = UInt64(lines[window - 1]) else {
            throw InstructionCountError(problem: "\(counts), line \(window): not a count: \(lines[window - 1])")
        }
        return count
    }
}
