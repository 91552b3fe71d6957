/// A side of a comparison.
public enum ComparisonSide: String, Sendable, Hashable, CaseIterable {
    /// The build compared against.
    case baseline
    /// The build under test.
    case candidate
}
