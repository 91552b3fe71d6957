import StrobeStatistics

/// Whether a time its test's counts settled (``CountedWork``) was measured
/// far enough for its interval to mean something.
///
/// A settled time keeps the interval of the look that settled it, often
/// the first, after two to four rounds at an early look's strict level: on
/// a noisy machine that interval can run from −100% to +10¹²%. Such an
/// interval cannot tell the change from a halving or a doubling, so the
/// reports say "not measured far enough" in its place (the JSON keeps the
/// numbers and ``MetricComparison/notMeasuredFarEnough``).
///
/// The rule: an interval sizes its change when each bound lies within a
/// factor of ``widestFactor`` (2) of the estimated ratio. A settled time on
/// a quiet machine spans a few percent ([−3, +4]); one from four pairs on
/// a busy one spans from a near-zero ratio to many times the estimate, far
/// past the factor either way, so the line between them is not delicate.
public enum SizedInterval {
    /// The factor between the estimated ratio and either bound of its
    /// interval past which the interval does not size the change.
    public static let widestFactor = 2.0

    /// What the reports print instead of such an interval.
    public static let text = "not measured far enough"

    /// Whether `shift` sizes its change: its ratio and bounds are positive
    /// and finite, the upper bound at most ``widestFactor`` times the
    /// ratio and the lower at least the ratio over it.
    public static func sizes(_ shift: ShiftEstimate) -> Bool {
        guard shift.ratio > 0, shift.lower > 0, shift.upper.isFinite, shift.ratio.isFinite else { return false }
        return shift.upper <= shift.ratio * widestFactor && shift.lower >= shift.ratio / widestFactor
    }
}
