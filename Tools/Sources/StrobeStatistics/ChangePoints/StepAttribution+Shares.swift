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
            var result = attributed
            guard let reference = host.reference.first(where: { $0.name == attributed.step.metric }),
                let shares = StepShares.split(
                    attributed.step, series: series, reference: reference.values, countedStep: countedStep)
            else {
                if let countedStep, attributed.cause != .code {
                    result.cause = .code
                    result.reason = "\(countedStep) stepped at the same run (\(attributed.reason))"
                }
                return result
            }
            result.shares = shares
            // Shares that decide nothing leave the cause and its evidence.
            guard shares.cause != .undetermined else { return result }
            result.cause = shares.cause
            result.reason = "\(shares.line) (\(attributed.reason))"
            return result
        }
    }

    /// The test of a series' name: what precedes its last `/`.
    static func testPart(of name: String) -> String {
        guard let slash = name.lastIndex(of: "/") else { return name }
        return String(name[..<slash])
    }
}
