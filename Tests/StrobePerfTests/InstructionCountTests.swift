import Foundation
import StrobeProcessRunner
import StrobeResults
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import StrobePerf

/// The `instructions` metric: a suite run under simulation counts the same
/// instructions in every iteration and every process, and per function; so
/// does one run under emulation, without functions; a machine without a
/// hardware counter says why and goes on.
@Suite(.serialized, .processWide)
struct InstructionCountTests {
    /// Runs ProfileSuite's "parse document" (tokenize 60%, index 30%, render
    /// 10% of its work) with `arguments` and `environment`, and reads its
    /// results file.
    static func runProfileSuite(
        _ arguments: [String], environment: [String: String] = [:], status: Int32 = 0
    ) throws -> PerfRun {
        let output = NSTemporaryDirectory() + "strobe-instructions-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let outcome = try runProgram(
            builtProgram("ProfileSuite"), arguments + ["--filter", "^parse document$", "--results-dir", output],
            environment: ["PROFILE_SUITE_SCALE": "0.01"].merging(environment) { _, new in new }, timeLimit: 240)
        #expect(outcome.status == status, "\(outcome.output)\n\(outcome.errors)")
        let files = try FileManager.default.contentsOfDirectory(atPath: output).filter {
            $0.hasSuffix(".strobe-results")
        }
        try #require(files.count == 1, "\(outcome.output)\n\(outcome.errors)")
        return try ResultsFile.read(output + "/" + files[0])
    }

    /// Why a simulated run cannot be tested here, or nil.
    static var simulationProblem: String? {
        CallgrindEngine.problem(environment: ProcessInfo.processInfo.environment)
    }

    /// Two ProfileSuite processes counted by `mode` (3 iterations each),
    /// checked for what every counting process holds: counts only, the
    /// source named, the same instructions in every iteration and, to
    /// `processTolerance`, in both processes.
    static func twoCountedProcesses(_ mode: String, processTolerance: Double) throws -> [PerfRun] {
        let arguments = ["--instructions", mode, "--iterations", "3", "--warmup", "1"]
        let runs = [try runProfileSuite(arguments), try runProfileSuite(arguments)]
        for run in runs {
            #expect(run.metadata.simulated)
            #expect(run.metadata.instructionSource == mode)
            let test = try #require(run.tests.first)
            // Counts only: the counting process's times are not kept.
            #expect(test.metric("wall") == nil)
            #expect(test.metric("allocations") != nil)
            let counted = try #require(test.metric("instructions")).samples
            #expect(counted.count == 3)
            // The same instructions in every iteration, to a quarter of the
            // gate's 0.2% tolerance. Bookkeeping outside the measure block's
            // code still lands in a window now and then: one iteration of
            // 18.8 M counted 1,847 more under emulation at load 4 and 3,260
            // more at load 6 (0.017%); in a quiet run, none.
            let spread = (counted.max() ?? 0) / (counted.min() ?? 1) - 1
            #expect(spread < 5e-4, "\(counted)")
        }
        let a = try #require(runs[0].tests.first?.metric("instructions")?.samples.first)
        let b = try #require(runs[1].tests.first?.metric("instructions")?.samples.first)
        #expect(abs(a - b) / a < processTolerance, "\(a) against \(b)")
        return runs
    }

    @Test func aSimulatedRunCountsTheSameInstructionsEveryTimeAndPerFunction() throws {
        if let problem = Self.simulationProblem {
            print("skipped: no simulation here: \(problem)")
            return
        }
        for run in try Self.twoCountedProcesses("simulated", processTolerance: 0.001) {
            let test = try #require(run.tests.first)
            let counted = try #require(test.metric("instructions")).samples
            let profile = try #require(test.instructionProfile)
            #expect(profile.iterations == 3)
            let counts = profile.countPerIteration
            let total = profile.totalPerIteration
            let tokenize = try #require(counts["ProfileSuite.Document.tokenize(units:)"]).inclusive
            let index = try #require(counts["ProfileSuite.Document.index(units:)"]).inclusive
            #expect(abs(tokenize / total - 0.6) < 0.02, "\(tokenize) of \(total)")
            #expect(abs(index / tokenize - 0.5) < 0.001)
            let mean = counted.reduce(0, +) / Double(counted.count)
            #expect(abs(total - mean) <= mean * 1e-9)
        }
    }

    @Test func twoPercentMoreWorkInOneFunctionShowsInItsCount() throws {
        if let problem = Self.simulationProblem {
            print("skipped: no simulation here: \(problem)")
            return
        }
        let arguments = ["--instructions", "simulated", "--iterations", "2", "--warmup", "1"]
        let before = try #require(Self.runProfileSuite(arguments).tests.first?.instructionProfile)
        let after = try #require(
            Self.runProfileSuite(
                arguments, environment: ["PROFILE_SUITE_SLOWER": "index", "PROFILE_SUITE_FACTOR": "1.02"]
            ).tests.first?.instructionProfile)
        let name = "ProfileSuite.Document.index(units:)"
        let ratio =
            try #require(after.countPerIteration[name]).inclusive
            / (try #require(before.countPerIteration[name]).inclusive)
        #expect(abs(ratio - 1.02) < 0.002, "\(ratio)")
        let tokenize = "ProfileSuite.Document.tokenize(units:)"
        #expect(after.countPerIteration[tokenize]?.inclusive == before.countPerIteration[tokenize]?.inclusive)
    }

    /// Why an emulated run cannot be tested here, or nil.
    static var emulationProblem: String? {
        QEMUPluginEngine.problem(environment: ProcessInfo.processInfo.environment)
    }

    @Test func anEmulatedRunCountsTheSameInstructionsEveryTime() throws {
        if let problem = Self.emulationProblem {
            print("skipped: no emulation here: \(problem)")
            return
        }
        for run in try Self.twoCountedProcesses("emulated", processTolerance: 5e-4) {
            #expect(run.tests.first?.instructionProfile == nil)
        }
    }

    @Test func twoPercentMoreWorkInOneFunctionShowsInTheEmulatedCount() throws {
        if let problem = Self.emulationProblem {
            print("skipped: no emulation here: \(problem)")
            return
        }
        let arguments = ["--instructions", "emulated", "--iterations", "2", "--warmup", "1"]
        let before = try #require(Self.runProfileSuite(arguments).tests.first?.metric("instructions")?.samples)
        let after = try #require(
            Self.runProfileSuite(
                arguments, environment: ["PROFILE_SUITE_SLOWER": "index", "PROFILE_SUITE_FACTOR": "1.02"]
            ).tests.first?.metric("instructions")?.samples)
        // index is 30% of the work: 2% more of it is 0.6% more in all.
        let ratio = after[0] / before[0]
        #expect(abs(ratio - 1.006) < 0.002, "\(ratio)")
    }

    @Test func aProcessThatIsNotEmulatedSaysItsCountsAreMissing() throws {
        let counts = NSTemporaryDirectory() + "strobe-not-emulated-\(UUID().uuidString)"
        let run = try Self.runProfileSuite(
            ["--instructions", "emulated", "--iterations", "1"], environment: [QEMUPluginEngine.countsVariable: counts],
            status: 1)
        let error = try #require(run.tests.first?.error)
        #expect(error.contains("the emulator's counting plugin wrote no file \(counts)"), "\(error)")
    }

    @Test func withoutAHardwareCounterTheRunSaysWhyAndGoesOn() throws {
        let off = ["STROBE_INSTRUCTIONS_HARDWARE": "off"]
        let asked = try Self.runProfileSuite(["--instructions", "hardware", "--iterations", "2"], environment: off)
        #expect(asked.metadata.instructionNote.contains("STROBE_INSTRUCTIONS_HARDWARE=off"))
        #expect(asked.metadata.instructionSource.isEmpty)
        #expect(asked.tests.first?.metric("instructions") == nil)
        #expect(asked.tests.first?.metric("wall")?.samples.count == 2)
        // By default a machine without the counter counts none and says
        // nothing.
        let quiet = try Self.runProfileSuite(["--iterations", "2"], environment: off)
        #expect(quiet.metadata.instructionNote.isEmpty)
        #expect(quiet.tests.first?.metric("instructions") == nil)
    }

    @Test func theHardwareCounterCountsWhereTheMachineHasOne() throws {
        if let problem = HardwareCounterEngine.problem(environment: [:]) {
            print("skipped: \(problem)")
            return
        }
        let run = try Self.runProfileSuite(["--instructions", "hardware", "--iterations", "3"])
        #expect(run.metadata.instructionSource == "hardware")
        let counted = try #require(run.tests.first?.metric("instructions")).samples
        #expect(counted.allSatisfy { $0 > 0 })
        #expect(run.tests.first?.metric("wall") != nil)
    }
}
