import Foundation
import StrobeResults
import StrobeStatistics

/// The functions behind an instructions verdict: the same judging as the
/// sampled profile's (``FunctionComparison``), on the inclusive instructions
/// per iteration a simulation counted per function.
///
/// A count repeats from process to process, so a function whose count
/// spreads across each side's processes by no more than
/// ``MetricDefaults/instructionTolerance`` is decided by its difference
/// alone; one that spreads wider is tested process by process. A change
/// counts when it is at least a quarter of the instructions' floor of the
/// test's total (``MetricDefaults/instructionFloor`` / 4: it moves the test
/// by 0.125% or more), and a function is judged when it holds that share of
/// the test on either side.
extension FunctionComparison {
    /// The functions behind the verdict of each test in `tests` whose
    /// processes both sides counted, keyed by test name (`TEST` or
    /// `TEST [GROUP]`). `relativeFloor` is the instructions' floor of the
    /// test (a policy's, else ``MetricDefaults/instructionFloor``).
    public static func changes(
        tests: [TestVerdict], baselineInstructions baseline: [ProcessInstructions],
        candidateInstructions candidate: [ProcessInstructions], groupBy: String?, options: ComparisonOptions,
        relativeFloor: (String) -> Double = { _ in MetricDefaults.instructionFloor }
    ) -> [String: TestFunctionChanges] {
        eachTest(tests, baseline: baseline, candidate: candidate, groupBy: groupBy) { verdict, base, cand in
            compare(
                test: verdict.displayName, baselineInstructions: base, candidateInstructions: cand, options: options,
                relativeFloor: relativeFloor(verdict.test))
        }
    }

    /// One test's functions, judged by their counted instructions.
    public static func compare(
        test: String, baselineInstructions baseline: [ProcessInstructions],
        candidateInstructions candidate: [ProcessInstructions], options: ComparisonOptions,
        relativeFloor: Double = MetricDefaults.instructionFloor
    ) -> TestFunctionChanges {
        let rule = Rule(
            unit: .instructions, relativeFloor: relativeFloor / 4, smallestShare: relativeFloor / 4,
            tolerance: MetricDefaults.instructionTolerance)
        return judge(test: test, baseline: baseline, candidate: candidate, rule: rule, options: options)
    }
}
