import Foundation
import StrobeReader

/// Results as CSV rows, one per sample, for dashboards and for `strobe diff`.
public enum ResultsCSV {
    /// `suite,test,metric,unit,better,iteration,value` and one column per
    /// tag, a row per sample. The metric column is `TEST/METRIC`, so one file
    /// of many tests reads as distinct metrics.
    public static func render(_ run: PerfRun) -> String {
        let tagKeys = run.metadata.tags.keys.sorted()
        var lines = [(["suite", "test", "metric", "unit", "better", "iteration", "value"] + tagKeys.map(field)).joined(separator: ",")]
        for test in run.tests {
            for metric in test.metrics {
                for (iteration, sample) in metric.samples.enumerated() {
                    var cells = [
                        field(run.metadata.suite), field(test.name), field("\(test.name)/\(metric.name)"), field(metric.unit),
                        metric.lowerIsBetter ? "lower" : "higher", String(iteration), String(sample),
                    ]
                    cells += tagKeys.map { field(run.metadata.tags[$0] ?? "") }
                    lines.append(cells.joined(separator: ","))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func field(_ text: String) -> String { TraceExport.csvField(text) }
}
