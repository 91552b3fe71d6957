import Foundation

/// One figure of Strobe's benchmarks, printed as a JSON object on a line of
/// its own, with the baseline measured in the same run and the ratio between
/// them.
public struct Figure {
    /// What was measured.
    public var name: String
    /// The measured value.
    public var value: Double
    /// The unit of `value` and `baselineValue`.
    public var unit: String
    /// What the baseline is.
    public var baselineName: String
    /// The baseline, measured in the same run.
    public var baselineValue: Double
    /// How the ratio reads: value / baseline, unless this is set.
    public var ratioOverride: Double?
    /// The goal the figure is held to, in words (for example `ratio <= 0.6`).
    public var target: String?
    /// Further numbers printed beside the figure.
    public var extra: [String: Double]

    /// A figure; `ratioOverride`, `target` and `extra` are optional.
    public init(
        name: String, value: Double, unit: String, baselineName: String, baselineValue: Double,
        ratioOverride: Double? = nil, target: String? = nil, extra: [String: Double] = [:]
    ) {
        self.name = name
        self.value = value
        self.unit = unit
        self.baselineName = baselineName
        self.baselineValue = baselineValue
        self.ratioOverride = ratioOverride
        self.target = target
        self.extra = extra
    }

    /// The value over the baseline, or `ratioOverride` where it is set.
    public var ratio: Double { ratioOverride ?? (baselineValue == 0 ? 0 : value / baselineValue) }

    /// Prints the figure as one JSON line and flushes standard output.
    public func printLine() {
        var object: [String: Any] = [
            "figure": name,
            "value": rounded(value),
            "unit": unit,
            "baseline": baselineName,
            "baseline_value": rounded(baselineValue),
            "ratio": rounded(ratio),
        ]
        if let target { object["target"] = target }
        for (key, value) in extra { object[key] = rounded(value) }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        fflush(nil)
    }

    private func rounded(_ value: Double) -> Double {
        (value * 1000).rounded() / 1000
    }
}

/// The median of `runs` timings of `body`, which returns elapsed nanoseconds.
public func median(runs: Int, _ body: () -> Double) -> Double {
    var samples = (0..<runs).map { _ in body() }
    samples.sort()
    return samples[samples.count / 2]
}

/// The `share` quantile of `values`: the sorted values' entry at
/// ⌊count·share⌋ (the last for a share of 1); 0 when there are none.
public func quantile(_ values: [Double], _ share: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(Int(Double(sorted.count) * share), sorted.count - 1)]
}

/// The median of `values`, `quantile(values, 0.5)`.
public func median(_ values: [Double]) -> Double { quantile(values, 0.5) }
