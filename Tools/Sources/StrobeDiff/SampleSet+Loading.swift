import Foundation
import StrobeJudgement
import StrobeResults

/// Reading results files and CSV files into a ``SampleSet``.
extension SampleSet {
    /// Loads every path: a results file, a CSV file, or a directory of them
    /// (searched recursively for `.strobe-results` and `.csv` files).
    public static func load(_ paths: [String]) throws(DiffError) -> SampleSet {
        var set = SampleSet()
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw DiffError(path: path, problem: "no such file or directory")
            }
            if isDirectory.boolValue {
                let files = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                    .filter { $0.hasSuffix("." + ResultsFile.fileExtension) || $0.hasSuffix(".csv") }
                    .sorted()
                guard !files.isEmpty else {
                    throw DiffError(
                        path: path, problem: "directory holds no .\(ResultsFile.fileExtension) or .csv files")
                }
                for file in files { try set.add(file: path + "/" + file) }
            } else {
                try set.add(file: path)
            }
        }
        return set
    }

    /// Adds the series of one results file or CSV file.
    mutating func add(file: String) throws(DiffError) {
        if file.hasSuffix(".csv") {
            sources.append(file)
            series += try CSVSamples.parse(file: file)
            return
        }
        let run: PerfRun
        do {
            run = try ResultsFile.read(file)
        } catch {
            throw .resultsFile(error)
        }
        add(run, source: file)
    }
}
