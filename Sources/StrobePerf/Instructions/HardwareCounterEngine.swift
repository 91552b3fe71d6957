import CStrobeCounting
import Foundation
import StrobeProcessRunner

#if canImport(Glibc)
import Glibc
#endif

/// Counts with the CPU's hardware counter, in the suite's own process: a
/// perf event counting retired instructions, user space only, on every
/// thread of the process but the session's writer (threads those threads
/// start during the block are counted as they exit). Opened at each
/// window's start, so threads a test starts between iterations are counted
/// too. Totals only; most virtual machines expose no counter.
final class HardwareCounterEngine: InstructionEngine {
    static var facts: CountingEngine { .hardwareCounter }

    private var open: [Int32] = []

    /// Why the hardware counter cannot be used here, or nil when it can.
    /// `STROBE_INSTRUCTIONS_HARDWARE=off` turns it off, to test the path
    /// taken where a machine has none.
    static func problem(environment: [String: String]) -> String? {
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

    static func runsUnderTool(environment: [String: String]) -> Bool { false }

    static func launch(arguments: [String], environment: [String: String]) throws -> Int32? { nil }

    /// The counter, where `mode` is `.auto` or `.hardware` and the machine
    /// has one; `.hardware` on a machine without says why.
    static func attach(mode: InstructionCounting, environment: [String: String]) -> InstructionEngineAttachment {
        guard mode == .auto || mode == .hardware else { return .notHere }
        if let problem = problem(environment: environment) {
            return mode == .hardware ? .cannotCount("no hardware instruction counter: \(problem)") : .notHere
        }
        return .counting(HardwareCounterEngine())
    }

    func begin(excluding writer: Int32?) {
        open = Self.threadIDs().filter { $0 != writer }.compactMap { tid in
            let fd = cstrobe_instructions_open(pid_t(tid))
            return fd >= 0 ? fd : nil
        }
        for fd in open { _ = cstrobe_instructions_start(fd) }
    }

    func end(label: [CChar]) throws -> InstructionReading {
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
        return InstructionReading(instructions: sum, profile: nil)
    }

    func abandon() {
        for fd in open { close(fd) }
        open = []
    }

    /// The kernel ids of the process's threads.
    private static func threadIDs() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let ids = names.compactMap { Int32($0) }
        return ids.isEmpty ? [0] : ids
    }
}
