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
    /// counted step of its test says the code moved.
    static func withShares(_ steps: [AttributedStep], hosts: [HostHistory]) -> [AttributedStep] {
        let histories = Dictionary(hosts.map { ($0.host, $0) }, uniquingKeysWith: { first, _ in first })
        func values(_ host: HostHistory, _ name: String) -> [Double]? {
            host.metrics.first { $0.name == name }?.values
        }
        let counted = steps.filter { step in
            guard step.cause != .machine, let host = histories[step.host],
                let series = values(host, step.step.metric)
            else { return false }
            return CountedLevels.repeats(series)
        }
        return steps.map { attributed in
            guard let host = histories[attributed.host], let series = values(host, attributed.step.metric),
                !CountedLevels.repeats(series)
            else { return attributed }
            let test = testPart(of: attributed.step.metric)
            // The test's instructions first, where they stepped: the count
            // the counted view leads with.
            let stepped = counted.filter {
                $0.host == attributed.host && testPart(of: $0.step.metric) == test
                    && abs($0.step.firstAfter - attributed.step.firstAfter) <= 1
            }.map(\.step.metric)
            let countedStep =
                stepped.first { $0.dropFirst(test.count + 1) == MetricKind.instructionsName } ?? stepped.first
            // A counted step of the test elsewhere among this step's runs,
            // and none at its run: the evidence against.
            let first = attributed.step.firstAfter
            let span = (first - attributed.step.runsBefore)..<(first + attributed.step.runsAfter)
            let elsewhere =
                stepped.isEmpty
                ? counted.first {
                    $0.host == attributed.host && testPart(of: $0.step.metric) == test
                        && $0.step.firstAfter > span.lowerBound && $0.step.firstAfter < span.upperBound
                } : nil
            var result = attributed
            if let reference = host.reference.first(where: { $0.name == attributed.step.metric }),
                let shares = StepShares.split(
                    attributed.step, series: series, reference: reference.values, countedStep: countedStep)
            {
                result.shares = shares
                // Shares that decide nothing leave the cause and its evidence.
                if shares.cause != .undetermined {
                    result.cause = shares.cause
                    result.reason = "\(shares.line) (\(attributed.reason))"
                }
            } else if let countedStep, attributed.cause != .code {
                result.cause = .code
                result.reason = "\(countedStep) stepped at the same run (\(attributed.reason))"
            }
            return againstCountedWork(result, elsewhere: elsewhere)
        }
    }

    /// `step`, undetermined where it was the code's, when its test's
    /// counted work stepped at another run among its runs (`elsewhere`)
    /// and not at its own ± 1: the counts say where the code's work
    /// changed, and a time series' split a few runs from there is as
    /// likely placed by a few slow or fast runs (the heavy tail of a
    /// maximum, a busy stretch of the machine) as by a change the counts
    /// cannot see. The reason keeps what the reference said.
    static func againstCountedWork(_ step: AttributedStep, elsewhere: AttributedStep?) -> AttributedStep {
        guard step.cause == .code, let elsewhere else { return step }
        var result = step
        result.cause = .undetermined
        result.reason =
            "\(elsewhere.step.metric) stepped at position \(elsewhere.step.firstAfter + 1), not at this run ± 1: "
            + "the code's work changed there, and a split of the times \(abs(elsewhere.step.firstAfter - step.step.firstAfter)) "
            + "runs away may be their noise's (\(step.reason))"
        return result
    }

    /// The test of a series' name: what precedes its last `/`.
    static func testPart(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return name }
        return String(name[..<slash])
    }
}
