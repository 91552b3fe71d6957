import Foundation
import StrobeResults
import StrobeStatistics
import StrobeToolFormatting

/// The runner's `instructions` metric: the user-space instructions a
/// measure block executed, counted by the CPU (`hardware`) or by a
/// simulation of the suite under callgrind (`simulated`).
///
/// The count repeats from process to process of one build to a small
/// fraction of a percent, so a side whose spread (`max / min − 1`) lies
/// within ``instructionTolerance`` is judged as a deterministic count: the
/// relative difference of the sides' medians beyond ``instructionFloor``
/// (or a policy's `relative-floor` for the metric) is a regression or an
/// improvement at the first look, anything within it unchanged. A side that
/// spreads wider is tested process by process like a time, and the report
/// says the count was not deterministic. The report reads `+1.9%
/// instructions per iteration (4.12 M → 4.20 M)`.
extension MetricDefaults {
    /// The metric's name.
    public static let instructions = MetricKind.instructionsName

    /// The relative spread within each side (`max / min − 1` over its
    /// samples) up to which the instruction count is judged as
    /// deterministic: 0.2%, the one tolerance of counted work, which
    /// `strobe trend` walks its counted series by too
    /// (``CountedLevels/tolerance``; change it there). The measured A/A
    /// spread of the simulated count across processes of one build is far
    /// below it (at most 0.009% on the demo's suite, 0.0014% for its
    /// two-thread test, none for a single-threaded one: `make bench
    /// simulation`; at most 0.016% under callgrind and 0.006% under QEMU for
    /// ProfileSuite's threaded, async and allocating tests:
    /// docs/performance.md), a wide margin for suites whose bookkeeping
    /// varies more.
    public static let instructionTolerance = CountedLevels.tolerance

    /// The relative floor of the instruction count: a change of the sides'
    /// medians beyond 0.5% is a regression or an improvement. A policy's
    /// `relative-floor` for the metric overrides it.
    public static let instructionFloor = 0.005

    /// Whether `name` (`TEST/METRIC` or `METRIC`) is the instruction count.
    public static func isInstructions(_ name: String) -> Bool { kind(of: name) == .instructions }

    /// The default relative floor of the metric: ``instructionFloor`` for
    /// the instruction count, nil (the comparison's floor) for the others.
    public static func relativeFloor(_ name: String) -> Double? { isInstructions(name) ? instructionFloor : nil }

    /// The tolerance of a counted metric judged as deterministic:
    /// ``instructionTolerance`` for the instruction count, nil for others.
    public static func countTolerance(_ name: String) -> Double? {
        isInstructions(name) ? instructionTolerance : nil
    }

    /// "+1.9% instructions per iteration (4.12 M → 4.20 M)" for a counted
    /// metric judged within its tolerance, "±0.0% …" when the medians agree;
    /// without the noun when `naming` is false. Nil for any other row.
    static func toleratedCountChange(_ row: MetricComparison, naming: Bool = true) -> String? {
        guard row.isWithinCountTolerance, let shift = row.shift else { return nil }
        let before = row.baseline.median
        let after = row.candidate.median
        guard before.isFinite, after.isFinite else { return nil }
        let percent = shift.change * 100
        let digits = String(format: "%.1f", abs(percent))
        let sign = digits == "0.0" ? "±" : percent > 0 ? "+" : "−"
        let noun = naming ? " " + metricPart(of: row.name) : ""
        return "\(sign)\(digits)%\(noun) per iteration (\(HumanFormat.scaled(before)) → \(HumanFormat.scaled(after)))"
    }
}
