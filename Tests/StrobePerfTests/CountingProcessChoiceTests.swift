import StrobeProcessRunner
import Testing

/// The one chooser of a counting process, which a suite's relaunch and
/// `strobe compare` both call.
struct CountingProcessChoiceTests {
    private func candidates(seconds: Double, valgrind: Bool = true, qemu: Bool = true) -> CountingProcessCandidates {
        CountingProcessCandidates(
            predictedSimulationSeconds: seconds, simulationBudget: 20,
            installed: [.hardwareCounter] + (valgrind ? [.callgrind] : []) + (qemu ? [.qemuPlugin] : []))
    }

    /// What `.auto` picks given these candidates.
    private func auto(seconds: Double, valgrind: Bool = true, qemu: Bool = true) -> InstructionCounting? {
        let weighed = candidates(seconds: seconds, valgrind: valgrind, qemu: qemu)
        return InstructionCounting.auto.countingProcess(candidates: weighed)
    }

    @Test func anAskedEngineIsRunWhateverIsPredicted() {
        #expect(InstructionCounting.simulated.countingProcess() == .simulated)
        #expect(InstructionCounting.emulated.countingProcess(candidates: candidates(seconds: 1)) == .emulated)
        #expect(InstructionCounting.hardware.countingProcess(candidates: candidates(seconds: 1)) == nil)
        #expect(InstructionCounting.off.countingProcess(candidates: candidates(seconds: 1)) == nil)
    }

    @Test func autoInASuiteRunsNoCountingProcess() {
        #expect(InstructionCounting.auto.countingProcess() == nil)
    }

    @Test func autoPicksCallgrindWithinItsBudgetAndQEMUPastIt() {
        #expect(auto(seconds: 20) == .simulated)
        #expect(auto(seconds: 21) == .emulated)
        #expect(auto(seconds: 21, qemu: false) == .simulated)
        #expect(auto(seconds: 1, valgrind: false) == .emulated)
        #expect(auto(seconds: 1, valgrind: false, qemu: false) == nil)
    }
}
