import CStrobeCounting
import Foundation
import StrobeProcessRunner
import StrobeResults
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Counts the user-space instructions of measure blocks, from the CPU's
/// hardware counter or from the simulation or emulation the process runs in.
///
/// - Hardware: a perf event counting retired instructions, user space only,
///   on every thread of the process but the session's writer (threads those
///   threads start during the block are counted as they exit). Opened at
///   each window's start, so threads a test starts between iterations are
///   counted too.
/// - Simulated: the process runs under callgrind with its instrumentation
///   off (``SimulatedLaunch`` starts it so); a window switches it on, and
///   its end has callgrind write what it counted to a dump file, which is
///   read back at once for the total and the counts per function.
///   Callgrind counts every thread; the runner keeps the session's writer
///   asleep through the block instead (``PerfRunner`` gives a simulated
///   iteration's session a flush interval longer than any block), so that
///   the writer's wake-ups, which follow the clock, add nothing.
/// - Emulated: the process runs under QEMU's user-mode emulator with
///   Strobe's counting plugin (``EmulatedLaunch`` starts it so); a window's
///   start and end are marked by a system call the plugin watches for, and
///   at the end the plugin appends the window's count, every thread's, to a
///   file read back at once. The writer sleeps through the block as under
///   simulation.
final class InstructionCounter {
    /// Where the counts come from.
    enum Source: Equatable {
        case hardware
        case simulated(dumps: String)
        case emulated(counts: String)

        /// The name a results file records: `hardware`, `simulated` or
        /// `emulated`.
        var name: String {
            switch self {
            case .hardware: "hardware"
            case .simulated: "simulated"
            case .emulated: "emulated"
            }
        }

        /// Whether the process runs under a simulation or an emulation,
        /// whose times say nothing of the code's speed: only counts are kept.
        var countsOnly: Bool { self != .hardware }
    }

    /// What one window counted.
    struct Reading {
        /// Every instruction of the block.
        var instructions: UInt64
        /// Per function, for a simulated count.
        var profile: InstructionProfile?
    }

    let source: Source
    private var open: [Int32] = []
    /// Dumps callgrind has written in this process: they are numbered per
    /// process, whichever counter asked for them.
    private static let dumpsWritten = Atomic<Int>(0)
    /// Windows the emulation's plugin has closed in this process.
    private static let windowsClosed = Atomic<Int>(0)

    private init(source: Source) {
        self.source = source
    }

    /// The environment variable through which ``SimulatedLaunch`` tells the
    /// simulated process where callgrind writes its dumps.
    static let dumpDirectoryVariable = "STROBE_SIMULATION_DUMPS"

    /// The counter `mode` asks for, or nil and why there is none (nil and
    /// no reason when none was asked for: `off`, or `auto` on a machine
    /// without a hardware counter).
    static func make(
        _ mode: InstructionCounting, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (counter: InstructionCounter?, note: String?) {
        if cstrobe_simulation_running() != 0 {
            guard let dumps = environment[dumpDirectoryVariable], !dumps.isEmpty else {
                return (
                    nil,
                    "the process runs under Valgrind, but not as --instructions simulated starts it; "
                        + "instructions are not counted"
                )
            }
            return (InstructionCounter(source: .simulated(dumps: dumps)), nil)
        }
        if EmulatedLaunch.isChild(environment: environment), let counts = environment[EmulatedLaunch.countsVariable] {
            return (InstructionCounter(source: .emulated(counts: counts)), nil)
        }
        switch mode {
        case .off:
            return (nil, nil)
        case .simulated:
            return (nil, "instructions are counted only in the simulated process --instructions simulated starts")
        case .emulated:
            return (nil, "instructions are counted only in the emulated process --instructions emulated starts")
        case .auto, .hardware:
            if let problem = hardwareProblem(environment: environment) {
                return (nil, mode == .hardware ? "no hardware instruction counter: \(problem)" : nil)
            }
            return (InstructionCounter(source: .hardware), nil)
        }
    }

    /// Why the hardware counter cannot be used here, or nil when it can.
    /// `STROBE_INSTRUCTIONS_HARDWARE=off` turns it off, to test the path
    /// taken where a machine has none.
    static func hardwareProblem(environment: [String: String]) -> String? {
        if environment["STROBE_INSTRUCTIONS_HARDWARE"] == "off" {
            return "turned off by STROBE_INSTRUCTIONS_HARDWARE=off"
        }
        let fd = cstrobe_instructions_open(0)
        guard fd >= 0 else {
            let code = errno
            return "perf_event_open of PERF_COUNT_HW_INSTRUCTIONS failed: \(String(cString: strerror(code))) "
                + "(errno \(code)); a virtual machine often exposes no CPU counters"
        }
        close(fd)
        return nil
    }

    /// Starts counting, on every thread but `writer` (the session's writer
    /// thread, by its kernel id).
    func begin(excluding writer: Int32?) {
        switch source {
        case .simulated:
            cstrobe_simulation_begin()
        case .emulated:
            cstrobe_emulation_mark(Int32(CSTROBE_EMULATION_BEGIN))
        case .hardware:
            open = Self.threadIDs().filter { $0 != writer }.compactMap { tid in
                let fd = cstrobe_instructions_open(pid_t(tid))
                return fd >= 0 ? fd : nil
            }
            for fd in open { _ = cstrobe_instructions_start(fd) }
        }
    }

    /// Stops counting and reads what the window counted; `label` (a C
    /// string, made before the window opened) names the window in a
    /// simulation's dump.
    func end(label: [CChar]) throws -> Reading {
        switch source {
        case .simulated(let dumps):
            label.withUnsafeBufferPointer { cstrobe_simulation_end($0.baseAddress) }
            let number = Self.dumpsWritten.add(1, ordering: .relaxed).newValue
            return try readDump(in: dumps, number: number)
        case .emulated(let counts):
            cstrobe_emulation_mark(Int32(CSTROBE_EMULATION_END))
            let window = Self.windowsClosed.add(1, ordering: .relaxed).newValue
            return Reading(instructions: try Self.emulatedCount(in: counts, window: window), profile: nil)
        case .hardware:
            var sum: UInt64 = 0
            var failure: Int32?
            for fd in open {
                var value: UInt64 = 0
                if cstrobe_instructions_stop(fd, &value) == 0 { sum &+= value } else { failure = errno }
                close(fd)
            }
            open = []
            if let failure {
                throw InstructionCountError(problem: "reading the instruction counter failed (errno \(failure))")
            }
            return Reading(instructions: sum, profile: nil)
        }
    }

    /// Closes a window whose block threw, without reading it.
    func abandon() {
        switch source {
        case .simulated:
            cstrobe_simulation_end("strobe abandoned window")
            let number = Self.dumpsWritten.add(1, ordering: .relaxed).newValue
            if let path = try? dumpPath(in: dumpDirectory, number: number) { unlink(path) }
        case .emulated:
            cstrobe_emulation_mark(Int32(CSTROBE_EMULATION_END))
            Self.windowsClosed.add(1, ordering: .relaxed)
        case .hardware:
            for fd in open { close(fd) }
            open = []
        }
    }

    private var dumpDirectory: String {
        if case .simulated(let dumps) = source { return dumps }
        return ""
    }

    /// Callgrind names the n-th dump of a run `OUT.n`, OUT being the
    /// `--callgrind-out-file` the launch gave (`DIR/callgrind.out`).
    private func dumpPath(in directory: String, number: Int) throws -> String {
        let path = "\(directory)/callgrind.out.\(number)"
        guard FileManager.default.fileExists(atPath: path) else {
            let found = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            throw InstructionCountError(
                problem: "callgrind wrote no dump \(path) (found: \(found.sorted().joined(separator: ", ")))")
        }
        return path
    }

    private func readDump(in directory: String, number: Int) throws -> Reading {
        let path = try dumpPath(in: directory, number: number)
        defer { unlink(path) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InstructionCountError(problem: "cannot read callgrind's dump \(path)")
        }
        let dump = try CallgrindDump(parsing: String(decoding: data, as: UTF8.self), source: path)
        return Reading(instructions: dump.total, profile: dump.profile)
    }

    /// The count the plugin appended for the `window`-th window (from 1):
    /// its file holds one decimal line per window closed.
    private static func emulatedCount(in path: String, window: Int) throws -> UInt64 {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InstructionCountError(problem: "the emulator's counting plugin wrote no file \(path)")
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count >= window else {
            throw InstructionCountError(
                problem: "the emulator's counting plugin wrote \(lines.count) counts to \(path), "
                    + "window \(window) ended (is the process running under the plugin?)")
        }
        guard let count = UInt64(lines[window - 1]) else {
            throw InstructionCountError(problem: "\(path), line \(window): not a count: \(lines[window - 1])")
        }
        return count
    }

    /// The kernel ids of the process's threads.
    private static func threadIDs() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let ids = names.compactMap { Int32($0) }
        return ids.isEmpty ? [0] : ids
    }
}

/// Instructions could not be counted: what went wrong.
struct InstructionCountError: Error, CustomStringConvertible {
    /// What went wrong.
    var problem: String

    var description: String { "instructions: \(problem)" }
}
