/// How one frame of a differential flame graph changed from the baseline
/// to the candidate.
public enum FrameChange: String, Sendable, Hashable, Codable, CaseIterable {
    /// Grew by at least the floor and by at least ``relativeShare`` of itself.
    case slower
    /// Shrank by as much.
    case faster
    /// Moved by less.
    case unchanged
    /// Not on the baseline's stacks, and at least the floor on the candidate's.
    case new
    /// Not on the candidate's stacks, and at least the floor on the baseline's.
    case gone

    /// A frame changed when it moved by at least this share of the larger of
    /// its two amounts (and by the floor): 5%.
    public static let relativeShare = 0.05

    /// The change of a frame of `baseline` and `candidate` (the same unit),
    /// where a change smaller than `floor` is none.
    public static func of(baseline: Double, candidate: Double, floor: Double) -> FrameChange {
        let difference = candidate - baseline
        guard abs(difference) >= floor, abs(difference) >= relativeShare * max(baseline, candidate),
            difference != 0
        else { return .unchanged }
        if baseline == 0 { return .new }
        if candidate == 0 { return .gone }
        return difference > 0 ? .slower : .faster
    }

    /// The colour a frame is filled with: shades of red for slower (deeper
    /// as the ratio grows, to twice or more), of blue for faster, a warm
    /// grey for unchanged; new frames a deep magenta, gone ones a pale grey
    /// (drawn dashed).
    public static func colour(_ change: FrameChange, baseline: Double, candidate: Double) -> String {
        switch change {
        case .new: return "#ad1457"
        case .gone: return "#eeeeee"
        case .unchanged: return "#e3dccf"
        case .slower, .faster:
            let ratio = max(baseline, candidate) / max(min(baseline, candidate), .leastNonzeroMagnitude)
            // 1.05× is the palest shade, 2× and more the deepest.
            let depth = min(max((ratio - 1) / 1, 0.05), 1)
            let pale: (Double, Double, Double) = change == .slower ? (255, 205, 205) : (205, 220, 255)
            let deep: (Double, Double, Double) = change == .slower ? (198, 40, 40) : (21, 101, 192)
            func mix(_ a: Double, _ b: Double) -> Int { Int((a + (b - a) * depth).rounded()) }
            let rgb = [mix(pale.0, deep.0), mix(pale.1, deep.1), mix(pale.2, deep.2)]
            return "#" + rgb.map { hex($0) }.joined()
        }
    }

    private static func hex(_ value: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[(value >> 4) & 15], digits[value & 15]])
    }
}
