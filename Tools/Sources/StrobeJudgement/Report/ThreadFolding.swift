import Foundation
import StrobeStatistics

/// Folds a test's `thread.*` metrics into its `process.*` ones when the test
/// ran on one thread: the measuring thread then did (almost) all the
/// process's work, and the two rows would repeat each other.
enum ThreadFolding {
    /// The share of the process's CPU time (user + system, every iteration
    /// of every process on both sides) the measuring thread must account for
    /// to count as the only thread that ran.
    static let singleThreadShare = 0.95

    /// Removes from `inputs` the `thread.X` rows of every test that ran on
    /// one thread and has a `process.X` row, unless the thread row gates
    /// (a policy asked for it); returns the tests folded.
    static func fold(_ inputs: inout [ComparisonEngine.Input]) -> [String] {
        struct Key: Hashable {
            var test: String
            var group: String
        }
        var byKey: [Key: [String: Int]] = [:]
        for (index, input) in inputs.enumerated() {
            let key = Key(test: MetricDefaults.testPart(of: input.name), group: input.group)
            byKey[key, default: [:]][MetricDefaults.metricPart(of: input.name)] = index
        }
        var removed = Set<Int>()
        var folded: [String] = []
        for (key, metrics) in byKey {
            func total(_ prefix: String) -> Double? {
                guard let user = metrics["\(prefix).cpu.user"], let system = metrics["\(prefix).cpu.system"] else {
                    return nil
                }
                return [user, system].reduce(0.0) { sum, index in
                    sum
                        + (inputs[index].baseline + inputs[index].candidate).reduce(0.0) {
                            $0 + $1.samples.reduce(0, +)
                        }
                }
            }
            guard let thread = total("thread"), let process = total("process"), thread >= singleThreadShare * process
            else { continue }
            var any = false
            for (metric, index) in metrics where metric.hasPrefix("thread.") && !inputs[index].gates {
                guard metrics["process." + metric.dropFirst("thread.".count)] != nil else { continue }
                removed.insert(index)
                any = true
            }
            if any { folded.append(key.group.isEmpty ? key.test : "\(key.test) [\(key.group)]") }
        }
        inputs = inputs.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        return folded.sorted()
    }
}
