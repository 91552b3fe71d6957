import StrobeResults

/// Per-iteration values collected into metrics, in first-seen order.
package struct MetricTable {
    package private(set) var metrics: [PerfMetric] = []
    private var index: [String: Int] = [:]

    /// An empty table.
    package init() {}

    /// Adds every value of `sample` to its metric.
    package mutating func add(_ sample: IterationSample) {
        for value in sample.values {
            if let position = index[value.name] {
                metrics[position].samples += value.samples
            } else {
                index[value.name] = metrics.count
                metrics.append(value)
            }
        }
    }

    /// The samples of the metric `name` so far.
    package func samples(of name: String) -> [Double] {
        index[name].map { metrics[$0].samples } ?? []
    }
}
