import Foundation

/// An engine that counts the instructions of measure blocks, as a suite's
/// relaunch, the chooser (``InstructionCounting/countingProcess(candidates:)``)
/// and `strobe compare` weigh it: the `--instructions` mode that asks for it,
/// what it needs on the machine, how it runs the measured process and what
/// it counts.
///
/// How each engine counts is StrobePerf's (a file per engine, each carrying
/// one of these); the `strobe` command links none of it, so it asks these
/// facts instead.
public struct CountingEngine: Sendable, Hashable {
    /// A program an engine runs the suite under, and how to install it.
    public struct Tool: Sendable, Hashable {
        /// The executable's name on the path: `valgrind`, `qemu-x86_64`.
        public let program: String
        /// Its name in a message: `Valgrind`, `QEMU`.
        public let name: String
        /// The Debian package that installs it: `valgrind`, `qemu-user`.
        public let package: String
    }

    /// How an engine runs the process it counts.
    public enum Launch: Sendable, Hashable {
        /// The suite's own process counts, as it runs.
        case inPlace
        /// The suite runs again as a child process under `tool`, which
        /// counts; that process's times say nothing of the code's speed,
        /// so its results carry counts only.
        case relaunch(under: Tool)
    }

    /// What an engine counts in a measure block.
    public enum Counts: Sendable, Hashable {
        /// The block's instructions in all.
        case totals
        /// Those, and every function's own and inclusive instructions.
        case perFunction
    }

    /// The `--instructions` mode that asks for it; its raw value is the
    /// source a results file records (`hardware`, `simulated`, `emulated`).
    public let mode: InstructionCounting
    /// The engine in a message: `callgrind`, `QEMU`, `hardware counter`.
    public let name: String
    /// How a message says it counts: `simulation`, `emulation`, `hardware`.
    public let method: String
    /// How it runs the process it counts.
    public let launch: Launch
    /// What it counts.
    public let counts: Counts

    /// Whether it counts per function, and so names the functions whose
    /// instructions changed.
    public var namesFunctions: Bool { counts == .perFunction }

    /// The program it runs the suite under; nil for an engine that counts in
    /// place.
    public var tool: Tool? {
        if case .relaunch(let tool) = launch { return tool }
        return nil
    }

    /// Whether what it runs the suite under is on `environment`'s path
    /// (true for an engine that counts in place, which runs under nothing).
    public func isInstalled(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let tool else { return true }
        return ProcessRunner.executable(named: tool.program, environment: environment) != nil
    }

    /// The CPU's hardware counter: a perf event per thread, in the suite's
    /// own process; totals only.
    public static let hardwareCounter = CountingEngine(
        mode: .hardware, name: "hardware counter", method: "hardware", launch: .inPlace, counts: .totals)

    /// Valgrind's callgrind: the suite runs again under it, 20 to 100 times
    /// slower, and it counts per function.
    public static let callgrind = CountingEngine(
        mode: .simulated, name: "callgrind", method: "simulation",
        launch: .relaunch(under: Tool(program: "valgrind", name: "Valgrind", package: "valgrind")),
        counts: .perFunction)

    /// QEMU's user-mode emulator with Strobe's counting plugin: the suite
    /// runs again under it, about 20 times slower for integer code, and it
    /// counts totals only.
    public static let qemuPlugin = CountingEngine(
        mode: .emulated, name: "QEMU", method: "emulation",
        launch: .relaunch(
            under: Tool(program: InstructionCounting.emulatorName, name: "QEMU", package: "qemu-user")),
        counts: .totals)

    /// Every engine: the hardware counter, then the ones that relaunch, the
    /// one that names functions first.
    public static let all: [CountingEngine] = [.hardwareCounter, .callgrind, .qemuPlugin]
}

extension InstructionCounting {
    /// The engine this mode asks for; nil for `.auto` (the hardware counter,
    /// and in `strobe compare` the chooser's pick) and `.off`.
    public var engine: CountingEngine? { CountingEngine.all.first { $0.mode == self } }
}
