import Foundation

/// A time step split into what the pinned reference explains and what is
/// left: the reference's change over the same nights is the machine's
/// share, the series' change beyond it the code's, each with an interval.
///
/// On a log scale the series' step is the sum of the two: `log(series) =
/// log(machine) + log(code)`. The machine's share is the reference's own
/// step over the step's nights; the code's is the step of the series over
/// the reference, night by night (the nightly ratio cancels what the
/// machine did to both that night), each a Hodges–Lehmann shift with its
/// distribution-free interval.
public struct StepShares: Sendable, Hashable, Codable {
    /// The reference's change over the step's nights: the machine's share.
    public var machine: ShiftEstimate
    /// The series' change beyond the reference's: the code's share.
    public var code: ShiftEstimate
    /// A counted series of the same test (its instructions) that stepped
    /// at the same run ± 1: evidence of the code; nil when none did.
    public var countedStep: String?
    /// The test's instruction count, where it held one level over the
    /// step's runs and the test's threads were on the CPU for its wall time
    /// (``StepAttribution/unchangedWork(of:host:countedSteps:)``): evidence
    /// that the code's work did not change; nil otherwise.
    public var unchangedWork: String?

    /// Whether the machine's share is a change: its interval excludes none.
    public var machineMoved: Bool { machine.lower > 1 || machine.upper < 1 }
    /// Whether what is left beyond the reference is a change.
    public var beyondReferenceMoved: Bool { code.lower > 1 || code.upper < 1 }
    /// Whether the code's share is a change, or a counted series of the
    /// test stepped with it; not when the test's work held its level.
    public var codeMoved: Bool { countedStep != nil || (beyondReferenceMoved && unchangedWork == nil) }

    /// The cause the shares give: the code's, the machine's, or (reported
    /// as the code's, since the code changed) both. What is left beyond
    /// the reference of a test whose work did not change is not the
    /// code's: undetermined, or the machine's where the reference moved.
    public var cause: StepCause {
        if codeMoved { return .code }
        return machineMoved ? .machine : .undetermined
    }

    /// "both: +16% [+9, +23] the code's beyond +20% [+17, +23] the
    /// machine's", "the code's: +16% [+9, +23]", "the machine's: +20% [+17,
    /// +23]; the code's +1% [−4, +6]", and where neither share is a change,
    /// "undetermined: the reference's +15% [−1, +37], beyond it +13% [−6,
    /// +34]; …". The line begins with ``cause``.
    public var line: String {
        let counted = countedStep.map { "; \($0) stepped at the same run" } ?? ""
        if codeMoved, machineMoved {
            return "both: \(Self.text(code)) the code's beyond \(Self.text(machine)) the machine's" + counted
        }
        if codeMoved { return "the code's: \(Self.text(code)) beyond the reference's \(Self.text(machine))" + counted }
        if let unchangedWork, beyondReferenceMoved {
            let unchanged =
                "\(Self.text(code)) beyond the reference with the test's work unchanged (\(unchangedWork) "
                + "held its level, the test on the CPU)"
            return machineMoved
                ? "the machine's: \(Self.text(machine)), and \(unchanged)"
                : "unexplained: \(unchanged); the reference's \(Self.text(machine))"
        }
        guard machineMoved else {
            return "undetermined: the reference's \(Self.text(machine)), beyond it \(Self.text(code)); neither "
                + "share is a change on its own"
        }
        return "the machine's: \(Self.text(machine)); the code's \(Self.text(code))"
    }

    /// "+16% [+9, +23]".
    static func text(_ shift: ShiftEstimate) -> String {
        func percent(_ ratio: Double) -> String {
            let value = (ratio - 1) * 100
            let text = String(format: abs(value) >= 10 ? "%.0f" : "%.1f", value)
            return value >= 0 ? "+" + text : "−" + text.dropFirst()
        }
        return "\(percent(shift.ratio))% [\(percent(shift.lower)), \(percent(shift.upper))]"
    }

    /// The shares of `step` of `series`, against `reference` measured on
    /// the same nights; nil when the step's nights are not all in both, or
    /// a value is not positive.
    public static func split(
        _ step: HistoryStep, series: [Double], reference: [Double], countedStep: String? = nil,
        unchangedWork: String? = nil
    ) -> StepShares? {
        split(
            at: step.firstAfter, runsBefore: step.runsBefore, runsAfter: step.runsAfter,
            confidence: step.change.confidence, series: series, reference: reference, countedStep: countedStep,
            unchangedWork: unchangedWork)
    }

    /// The shares of the change of `series` across run `firstAfter`, over
    /// the `runsBefore` runs before it and the `runsAfter` from it, against
    /// `reference` measured on the same nights; nil as for a step's.
    static func split(
        at firstAfter: Int, runsBefore: Int, runsAfter: Int, confidence: Double, series: [Double],
        reference: [Double], countedStep: String? = nil, unchangedWork: String? = nil
    ) -> StepShares? {
        let before = (firstAfter - runsBefore)..<firstAfter
        let after = firstAfter..<(firstAfter + runsAfter)
        guard before.lowerBound >= 0, after.upperBound <= min(reference.count, series.count),
            series.allSatisfy({ $0 > 0 }), reference.allSatisfy({ $0 > 0 })
        else { return nil }
        let ratios = zip(series, reference).map { $0 / $1 }
        guard
            let machine = ShiftEstimate.hodgesLehmann(
                baseline: Array(reference[before]), candidate: Array(reference[after]), confidence: confidence),
            let code = ShiftEstimate.hodgesLehmann(
                baseline: Array(ratios[before]), candidate: Array(ratios[after]), confidence: confidence)
        else { return nil }
        return StepShares(machine: machine, code: code, countedStep: countedStep, unchangedWork: unchangedWork)
    }
}
