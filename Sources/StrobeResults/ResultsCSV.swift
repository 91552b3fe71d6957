import Foundation
import StrobeFormatting

/// Results as CSV rows, one per sample, for dashboards and for `strobe diff`.
public enum ResultsCSV {
    /// `suite,test,metric,unit,better,run,round,iteration,value` and one
    /// column per tag, a row per sample. The metric column is `TEST/METRIC`,
    /// so one file of many tests reads as distinct metrics. `run` names the
    /// process each sample came from (for `strobe run` results, each launch
    /// is a run of its own) and `round` its round in an interleaved
    /// comparison, empty outside one.
    public static func render(_ run: PerfRun) -> String {
        let tagKeys = run.metadata.tags.keys.sorted()
        let header = ["suite", "test", "metric", "unit", "better", "run", "round", "iteration", "value"]
        var lines = [(header + tagKeys.map(field)).joined(separator: ",")]
        let round = run.metadata.round.map(String.init) ?? ""
        for test in run.tests {
            for metric in test.metrics {
                for (iteration, sample) in metric.samples.enumerated() {
                    let runID = run.metadata.runID
                    var cells = [
                        field(run.metadata.suite), field(test.name), field("\(test.name)/\(metric.name)"),
                        field(metric.unit),
                        metric.better.rawValue,
                        field(run.metadata.samplesAreLaunches ? "\(runID)#\(iteration)" : runID),
                        round, String(iteration), String(sample),
                    ]
                    cells += tagKeys.map { field(run.metadata.tags[$0] ?? "") }
                    lines.append(cells.joined(separator: ","))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func field(_ text: String) -> String { CSVField.escape(text) }
}
