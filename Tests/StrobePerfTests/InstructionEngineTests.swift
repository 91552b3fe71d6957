import StrobeProcessRunner
import Testing

@testable import StrobePerf

/// The engines behind one protocol: each mode the `strobe` command knows has
/// one engine that counts with it, and the process finds its engine by
/// asking each, not by its mode alone.
struct InstructionEngineTests {
    @Test func everyEngineTheCommandKnowsCountsInTheRunner() {
        let modes = InstructionCounter.engines.map { $0.facts.mode }
        #expect(Set(modes).count == modes.count, "two engines for one mode: \(modes)")
        #expect(Set(modes) == Set(CountingEngine.all.map(\.mode)))
        for engine in CountingEngine.all {
            #expect(engine.mode.engine == engine)
            #expect(InstructionCounter.engine(for: engine.mode)?.facts == engine)
        }
        #expect(InstructionCounting.auto.engine == nil && InstructionCounting.off.engine == nil)
        // Those that relaunch come first: a counting child counts whatever its mode.
        let relaunching = InstructionCounter.engines.map { $0.facts.tool != nil }
        #expect(relaunching == relaunching.sorted { $0 && !$1 })
    }

    @Test func onlyCallgrindNamesFunctionsAndOnlyTheHardwareCounterCountsInPlace() {
        #expect(CountingEngine.all.filter(\.namesFunctions) == [.callgrind])
        #expect(CountingEngine.all.filter { $0.tool == nil } == [.hardwareCounter])
        #expect(CountingEngine.callgrind.tool?.program == "valgrind")
        #expect(CountingEngine.qemuPlugin.tool?.program == InstructionCounting.emulatorName)
        #expect(CountingEngine.hardwareCounter.isInstalled(environment: ["PATH": "/nonexistent"]))
        #expect(!CountingEngine.callgrind.isInstalled(environment: ["PATH": "/nonexistent"]))
    }

    @Test func aProcessOutsideItsEnginesToolSaysWhereItsModeCounts() {
        let off = ["STROBE_INSTRUCTIONS_HARDWARE": "off"]
        for mode in [InstructionCounting.simulated, .emulated] {
            let made = InstructionCounter.make(mode, environment: off)
            #expect(made.engine == nil)
            #expect(
                made.note
                    == "instructions are counted only in the \(mode.rawValue) process --instructions \(mode.rawValue) "
                    + "starts")
        }
        let hardware = InstructionCounter.make(.hardware, environment: off)
        #expect(hardware.engine == nil)
        #expect(hardware.note == "no hardware instruction counter: turned off by STROBE_INSTRUCTIONS_HARDWARE=off")
        for mode in [InstructionCounting.auto, .off] {
            let made = InstructionCounter.make(mode, environment: off)
            #expect(made.engine == nil && made.note == nil)
        }
    }

    @Test func theEmulatedChildFindsItsEngineWhateverItsMode() {
        let child = [QEMUPluginEngine.countsVariable: "/tmp/counts", "STROBE_INSTRUCTIONS_HARDWARE": "off"]
        for mode in InstructionCounting.allCases {
            let engine = InstructionCounter.make(mode, environment: child).engine
            #expect(engine is QEMUPluginEngine, "\(mode)")
            #expect(engine?.countsOnly == true)
        }
        #expect(QEMUPluginEngine.runsUnderTool(environment: child))
        #expect(!QEMUPluginEngine.runsUnderTool(environment: [QEMUPluginEngine.countsVariable: ""]))
    }
}
