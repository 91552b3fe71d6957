#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a perf suite counts the user-space instructions of its measure
/// blocks (the `instructions` metric), set by its `--instructions` option.
///
/// Instructions are counted work, not time: the same code on the same input
/// executes the same instructions whatever the machine's neighbours do, so a
/// change of a fraction of a percent is seen in one process. Time metrics
/// stay the judge of what instructions do not see (waiting, I/O, contention,
/// the memory system).
public enum InstructionCounting: String, Sendable, Hashable, CaseIterable {
    /// The CPU's hardware counter where the machine has one, nothing where
    /// it does not (most virtual machines expose none).
    case auto
    /// The hardware counter; where there is none, the run says why and goes
    /// on with its other metrics.
    case hardware
    /// A simulation: the suite runs again under Valgrind's callgrind, which
    /// counts every instruction of the measure blocks (and per function).
    /// That process's times say nothing of the code's speed, so its results
    /// carry counts only; where Valgrind cannot run, the run says why and
    /// goes on natively.
    case simulated
    /// An emulation: the suite runs again under QEMU's user-mode emulator
    /// with Strobe's counting plugin, which counts every instruction of the
    /// measure blocks, about 20 times slower than natively for integer code
    /// (a simulation measures 20 to 100 times slower) but over 100 times
    /// for floating point, and with no count per function. The
    /// emulated CPU's counts compare only with counts emulated the same
    /// way. Its results carry counts only, like a simulation's; where QEMU
    /// cannot run, the run says why and goes on natively.
    case emulated
    /// No instruction count.
    case off

    /// The name of QEMU's user-mode emulator for this machine's
    /// architecture, which `.emulated` runs a suite under: `qemu-x86_64` on
    /// x86-64, `qemu-aarch64` on 64-bit Arm.
    public static var emulatorName: String {
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "qemu-\(machine)"
    }
}
