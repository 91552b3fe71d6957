/// The settings of change-point detection over histories.
public struct StepDetectionOptions: Sendable, Hashable, Codable {
    /// The false discovery rate across all the series analysed together
    /// (Benjamini–Hochberg over series). With every series flat it is also
    /// the chance that any step is reported. Default 0.01.
    public var alpha = JudgementDefaults.alpha
    /// The fewest runs on each side of a confirmed step. A step with fewer
    /// runs after it (but at least 3) is reported as possible. Default 5.
    public var minimumSegment = 5
    /// Confidence of the intervals of the relative change. Default 0.95.
    public var confidence = JudgementDefaults.confidence
    /// The most runs on each side of a step that its change estimate and the
    /// test of a possible step use (the nearest ones). Default 100.
    public var estimateWindow = 100

    /// The defaults.
    public init() {}

    /// Throws when an option is out of its range.
    func validate() throws(SeriesAnalysisError) {
        guard alpha > 0, alpha < 1 else { throw .invalidOption(name: "alpha", value: alpha, expected: "0 < alpha < 1") }
        guard minimumSegment >= 2 else {
            throw .invalidOption(name: "minimumSegment", value: Double(minimumSegment), expected: "at least 2 runs")
        }
        guard confidence > 0, confidence < 1 else {
            throw .invalidOption(name: "confidence", value: confidence, expected: "0 < confidence < 1")
        }
        guard estimateWindow >= 2 * minimumSegment else {
            throw .invalidOption(
                name: "estimateWindow", value: Double(estimateWindow), expected: "at least twice minimumSegment")
        }
    }
}
