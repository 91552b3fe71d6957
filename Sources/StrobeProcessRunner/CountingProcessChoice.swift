/// What `.auto` weighs when it picks a counting process for
/// `strobe compare` on a machine whose hardware counter counted nothing.
public struct CountingProcessCandidates: Sendable, Hashable {
    /// Seconds one side's callgrind process is predicted to take.
    public var predictedSimulationSeconds: Double
    /// The most seconds callgrind may be predicted to take for `.auto` to
    /// choose it over QEMU.
    public var simulationBudget: Double
    /// Whether Valgrind is installed.
    public var valgrind: Bool
    /// Whether QEMU's user-mode emulator for this machine is installed.
    public var qemu: Bool

    /// The candidates: a prediction, a budget, and which tools are installed.
    public init(predictedSimulationSeconds: Double, simulationBudget: Double, valgrind: Bool, qemu: Bool) {
        self.predictedSimulationSeconds = predictedSimulationSeconds
        self.simulationBudget = simulationBudget
        self.valgrind = valgrind
        self.qemu = qemu
    }
}

extension InstructionCounting {
    /// The counting process this mode runs, the whole suite again under an
    /// engine that counts (`.simulated`: callgrind; `.emulated`: QEMU with
    /// Strobe's plugin), or nil for none: the one chooser that a perf
    /// suite's relaunch and `strobe compare` both call.
    ///
    /// `.simulated` and `.emulated` run their own engine. `.auto` runs one
    /// only given `candidates` (`strobe compare`, once no hardware counter
    /// counted; a suite's `.auto` is the hardware counter alone): callgrind
    /// where it is predicted to fit its budget or QEMU is missing, else
    /// QEMU, else none. `.hardware` and `.off` run none.
    public func countingProcess(candidates: CountingProcessCandidates? = nil) -> InstructionCounting? {
        switch self {
        case .simulated, .emulated:
            return self
        case .auto:
            guard let candidates else { return nil }
            let fits = candidates.predictedSimulationSeconds <= candidates.simulationBudget
            if candidates.valgrind, fits || !candidates.qemu { return .simulated }
            return candidates.qemu ? .emulated : nil
        case .hardware, .off:
            return nil
        }
    }
}
