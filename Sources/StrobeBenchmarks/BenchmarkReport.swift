import Foundation

/// One printed figure: a JSON object on a line of its own.
struct Figure {
    var name: String
    var value: Double
    var unit: String
    var baselineName: String
    var baselineValue: Double
    /// How the ratio reads: value / baseline, unless `ratioOverride` is set.
    var ratioOverride: Double? = nil
    var target: String? = nil
    var extra: [String: Double] = [:]

    var ratio: Double { ratioOverride ?? (baselineValue == 0 ? 0 : value / baselineValue) }

    func printLine() {
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
func median(runs: Int, _ body: () -> Double) -> Double {
    var samples = (0..<runs).map { _ in body() }
    samples.sort()
    return samples[samples.count / 2]
}
