import Foundation
import StrobeResults
import StrobeToolFormatting

/// Runs read from a history, written out again.
public enum HistoryExport {
    /// Writes each run (read with its samples) to `directory` as a results
    /// file named after its key; adding the directory back to a history
    /// stores the same runs. Returns the files written.
    public static func writeResults(_ runs: [HistoryRun], to directory: String) throws(HistoryError) -> [String] {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw HistoryError(
                .badArgument, "--output \(directory): cannot create the directory: \(error.localizedDescription)")
        }
        var files: [String] = []
        var used: Set<String> = []
        for run in runs {
            var name = fileName(for: run.key)
            if used.contains(name) {
                var number = 2
                while used.contains("\(name)-\(number)") { number += 1 }
                name = "\(name)-\(number)"
            }
            used.insert(name)
            let path = directory + "/" + name + "." + ResultsFile.fileExtension
            do {
                try ResultsFile.write(run.perfRun, to: path)
            } catch {
                throw HistoryError(.badArgument, error.description)
            }
            files.append(path)
        }
        return files
    }

    /// CSV of the runs (read with their samples), a row per sample:
    /// `suite,test,metric,unit,better,run,round,iteration,value` as
    /// `strobe results export` writes them, then `commit`, `branch`,
    /// `timestamp_ns`, and a column per tag key any run has.
    public static func csv(_ runs: [HistoryRun]) -> String {
        let fixed = [
            "suite", "test", "metric", "unit", "better", "run", "round", "iteration", "value", "commit", "branch",
            "timestamp_ns",
        ]
        let tagKeys = Set(runs.flatMap(\.metadata.tags.keys)).subtracting(fixed).sorted()
        var lines = [(fixed + tagKeys).map(CSVField.escape).joined(separator: ",")]
        for run in runs {
            let metadata = run.metadata
            let round = metadata.round.map(String.init) ?? ""
            let runID = metadata.runID.isEmpty ? run.key : metadata.runID
            let tags = tagKeys.map { CSVField.escape(metadata.tags[$0] ?? "") }
            for test in run.tests {
                for metric in test.metrics {
                    for (iteration, sample) in metric.samples.enumerated() {
                        let cells = [
                            CSVField.escape(metadata.suite), CSVField.escape(test.name),
                            CSVField.escape("\(test.name)/\(metric.name)"),
                            CSVField.escape(metric.unit), metric.better.rawValue,
                            CSVField.escape(metadata.samplesAreLaunches ? "\(runID)#\(iteration)" : runID), round,
                            String(iteration), String(sample), CSVField.escape(metadata.gitCommit),
                            CSVField.escape(run.branch),
                            String(metadata.timestamp),
                        ]
                        lines.append((cells + tags).joined(separator: ","))
                    }
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `key` with every character that is not a letter, digit, `.`, `_` or
    /// `-` replaced by `_`.
    static func fileName(for key: String) -> String {
        String(key.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    }
}
