import Foundation
import StrobeResults

extension StepAttribution {
    /// `steps` with the shares of each time step (``StepShares``) where its
    /// host has a reference series of the same name, and the evidence of
    /// the test's counted work: a counted series of the same test
    /// (`TEST/instructions` beside `TEST/wall`) that stepped at the same run
    /// ± 1 and is not the machine's makes the time step at least partly the
    /// code's, whatever the reference did; the shares say how much of it.
    /// A step with no reference of its name keeps its cause unless a
    /// counted step of its test says the code moved. A test whose work
    /// held its level over the step's runs while it computed
    /// (``unchangedWork(of:host:countedSteps:)``) is evidence against the
    /// code: such a step is the machine's where the reference moved, and
    /// undetermined where it did not. `countedAt` holds where each host's
    /// counted series stepped.
    static func withShares(
        _ steps: [AttributedStep], hosts: [HostHistory], countedAt: CountedBoundaries
    ) -> [AttributedStep] {
        let counted = steps.filter { step in
            guard step.cause != .machine, let host = hosts.first(where: { $0.host == step.host }),
                let series = host.metrics.first(where: { $0.name == step.step.metric })
            else { return false }
            return CountedLevels.repeats(series.values)
        }
        return steps.map { attributed in
            guard let hostIndex = hosts.firstIndex(where: { $0.host == attributed.host }),
                let series = hosts[hostIndex].metrics.first(where: { $0.name == attributed.step.metric })?.values,
                !CountedLevels.repeats(series)
            else { return attributed }
            let host = hosts[hostIndex]
            let test = testPart(of: attributed.step.metric)
            // The test's instructions first, where they stepped: the count
            // the counted view leads with.
            let stepped = counted.filter {
                $0.host == attributed.host && testPart(of: $0.step.metric) == test
                    && abs($0.step.firstAfter - attributed.step.firstAfter) <= 1
            }.map(\.step.metric)
            let countedStep =
                stepped.first { $0 == instructionsSeries(of: test) } ?? stepped.first
            let unchanged =
                countedStep == nil
                ? unchangedWork(of: attributed.step, host: host, countedSteps: countedAt[hostIndex]?[test] ?? [])
                : nil
            var result = attributed
            if let reference = host.reference.first(where: { $0.name == attributed.step.metric }),
                let shares = StepShares.split(
                    attributed.step, series: series, reference: reference.values, countedStep: countedStep,
                    unchangedWork: unchanged?.series)
            {
                result.shares = shares
                // Shares that decide nothing leave the cause and its evidence.
                if shares.cause != .undetermined || unchanged != nil {
                    result.cause = shares.cause
                    result.reason = "\(shares.line) (\(attributed.reason))"
                }
            } else if let countedStep, attributed.cause != .code {
                result.cause = .code
                result.reason = "\(countedStep) stepped at the same run (\(attributed.reason))"
            } else if let unchanged, attributed.cause == .code {
                result.cause = .undetermined
                result.reason = "\(unchanged.reason) (\(attributed.reason))"
            }
            return result
        }
    }

    /// The test's instruction count that held one level over `step`'s
    /// runs, where the test computed on both sides of it, and the reason in
    /// words; nil when the test has no counted instructions, its counted
    /// work stepped among those runs (`countedSteps`), or it waits.
    ///
    /// The same instructions on a thread that does not wait take the same
    /// time unless the machine runs them slower (a neighbour, the CPU's
    /// frequency, its caches) or their memory behaves differently: a time
    /// step of such a test is not the code's work, whatever a reference
    /// that did not move says. The test computes when, over the runs on
    /// each side, the median of its CPU share (``HostHistory/cpuShares``)
    /// is at least 1 − ``JudgementDefaults/waitingShare`` and the two
    /// medians agree within ``JudgementDefaults/parallelismTolerance`` (the
    /// rule `strobe compare` applies to settle a time by its counts): a
    /// test that sleeps, or whose workers came to run one after another,
    /// keeps its step.
    static func unchangedWork(
        of step: HistoryStep, host: HostHistory, countedSteps: [Int]
    ) -> (series: String, reason: String)? {
        let test = testPart(of: step.metric)
        let lower = step.firstAfter - step.runsBefore
        let upper = step.firstAfter + step.runsAfter
        guard
            let instructions = host.metrics.first(where: {
                $0.name == instructionsSeries(of: test) && CountedLevels.repeats($0.values)
            }),
            !countedSteps.contains(where: { $0 > lower && $0 < upper }),
            let shares = host.cpuShares[test], shares.count >= upper, lower >= 0
        else { return nil }
        let before = Quantiles.median(sorted: shares[lower..<step.firstAfter].sorted())
        let after = Quantiles.median(sorted: shares[step.firstAfter..<upper].sorted())
        guard min(before, after) >= 1 - JudgementDefaults.waitingShare,
            abs(log(after / before)) <= log(1 + JudgementDefaults.parallelismTolerance)
        else { return nil }
        func percent(_ share: Double) -> String { String(format: "%.0f%%", share * 100) }
        return (
            instructions.name,
            "the test's work did not change: \(instructions.name) held its level over these runs, and the test "
                + "was on the CPU for \(percent(before)) of its wall time before and \(percent(after)) after: "
                + "the same work ran at another speed"
        )
    }

    /// The name of `test`'s instruction count series: `TEST/instructions`.
    static func instructionsSeries(of test: String) -> String {
        "\(test)/\(MetricKind.instructionsName)"
    }

    /// The test of a series' name: what precedes its last `/`.
    static func testPart(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return name }
        return String(name[..<slash])
    }
}
