/// What `.auto` weighs when it picks a counting process for
/// `strobe compare` on a machine whose hardware counter counted nothing.
public struct CountingProcessCandidates: Sendable, Hashable {
    /// Seconds one side's process under the engine that names functions
    /// (callgrind) is predicted to take.
    public var predictedSimulationSeconds: Double
    /// The most seconds that engine may be predicted to take for `.auto` to
    /// choose it over one that counts totals only (QEMU).
    public var simulationBudget: Double
    /// The engines whose tool is installed (``CountingEngine/isInstalled(environment:)``);
    /// only those that relaunch the suite are weighed.
    public var installed: [CountingEngine]

    /// The candidates: a prediction, a budget, and the engines installed.
    public init(predictedSimulationSeconds: Double, simulationBudget: Double, installed: [CountingEngine]) {
        self.predictedSimulationSeconds = predictedSimulationSeconds
        self.simulationBudget = simulationBudget
        self.installed = installed
    }
}

extension InstructionCounting {
    /// The counting process this mode runs, the whole suite again under an
    /// engine that relaunches it (`.simulated`: callgrind; `.emulated`: QEMU
    /// with Strobe's plugin), or nil for none: the one chooser that a perf
    /// suite's relaunch and `strobe compare` both call.
    ///
    /// A mode whose ``engine`` relaunches runs that engine. `.auto` runs one
    /// only given `candidates` (`strobe compare`, once no hardware counter
    /// counted; a suite's `.auto` is the hardware counter alone): the one
    /// that names functions where it is predicted to fit its budget or no
    /// other is installed, else the first installed that counts totals only,
    /// else none. `.hardware` (which counts in place) and `.off` run none.
    public func countingProcess(candidates: CountingProcessCandidates? = nil) -> InstructionCounting? {
        guard self == .auto else { return engine?.tool != nil ? self : nil }
        guard let candidates else { return nil }
        let installed = candidates.installed.filter { $0.tool != nil }
        let naming = installed.first { $0.namesFunctions }
        let totalsOnly = installed.first { !$0.namesFunctions }
        let fits = candidates.predictedSimulationSeconds <= candidates.simulationBudget
        if let naming, fits || totalsOnly == nil { return naming.mode }
        return totalsOnly?.mode
    }
}
