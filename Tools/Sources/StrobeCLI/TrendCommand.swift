import ArgumentParser
import Foundation
import StrobePerf
import StrobeFormatting
import StrobeReader
import StrobeStatistics

/// `strobe trend PATH...`: where in a history of runs did a metric change?
struct TrendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trend",
        abstract: "Find the runs where metrics changed, in a history of results files.",
        discussion: """
            Reads results files (or directories of them), orders the runs by their timestamp, or by \
            commit with --order commit (oldest first, as `git rev-list --reverse HEAD` lists them in \
            the current repository), and for every metric finds change points by binary segmentation \
            with a Mann-Whitney statistic: the nightly view.
            """
    )

    enum Order: String, ExpressibleByArgument, CaseIterable {
        case time, commit
    }

    @Argument(help: "Results files or directories of them.")
    var paths: [String]

    @Option(help: "time (the runs' timestamps) or commit (git history order).")
    var order: Order = .time

    @Option(help: "Only metrics whose names match this regular expression.")
    var metric: String?

    @Option(help: "Significance level of a change point (default 0.01).")
    var alpha = 0.01

    @Option(name: .customLong("min-effect"), help: "Smallest change of the median reported, in percent (default 2).")
    var minEffect = 2.0

    func validate() throws {
        if let metric, (try? Regex(metric)) == nil {
            throw ValidationError("--metric: \"\(metric)\" is not a valid regular expression")
        }
        guard alpha > 0 && alpha < 1 else { throw ValidationError("--alpha must be between 0 and 1, not \(alpha)") }
        guard minEffect >= 0 && minEffect < 100 else {
            throw ValidationError("--min-effect is a percentage from 0 to 100, not \(minEffect)")
        }
    }

    func run() throws {
        var runs: [(path: String, run: PerfRun)] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure.badInput("\(path): no such file or directory")
            }
            let files = isDirectory.boolValue
                ? (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                    .filter { $0.hasSuffix("." + ResultsFile.fileExtension) }.sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                runs.append((file, try ResultsFile.read(file)))
            }
        }
        guard runs.count >= 2 else { throw CommandFailure.badInput("a trend needs at least two runs, found \(runs.count)") }
        switch order {
        case .time:
            runs.sort { $0.run.metadata.timestamp < $1.run.metadata.timestamp }
        case .commit:
            let history = Self.gitHistory()
            guard !history.isEmpty else { throw CommandFailure.badInput("--order commit: cannot read the git history here") }
            let position = Dictionary(history.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            for entry in runs where position[entry.run.metadata.gitCommit] == nil {
                throw CommandFailure.badInput(
                    "\(entry.path): commit \"\(entry.run.metadata.gitCommit)\" is not in this repository's history")
            }
            runs.sort {
                (position[$0.run.metadata.gitCommit]!, $0.run.metadata.timestamp) < (position[$1.run.metadata.gitCommit]!, $1.run.metadata.timestamp)
            }
        }
        let filter = try metric.map { try Regex($0) }
        var names: [String] = []
        var series: [String: [[Double]]] = [:]
        var units: [String: String] = [:]
        for (index, entry) in runs.enumerated() {
            for test in entry.run.tests {
                for metric in test.metrics {
                    let name = "\(test.name)/\(metric.name)"
                    if let filter, (try? filter.firstMatch(in: name)) == nil { continue }
                    if series[name] == nil {
                        names.append(name)
                        series[name] = Array(repeating: [], count: runs.count)
                        units[name] = metric.unit
                    }
                    series[name]![index] += metric.samples
                }
            }
        }
        var table = TextTable(header: ["metric", "changed at run", "commit", "before", "after", "change", "p"], rightAligned: [3, 4, 5, 6])
        for name in names.sorted() {
            let points = ChangePointDetector.detect(runs: series[name] ?? [], alpha: alpha, minimumEffect: minEffect / 100)
            for point in points {
                let run = runs[point.index].run
                let unit = units[name] == "ns" ? "ns" : units[name] == "bytes" ? "bytes" : nil
                table.rows.append([
                    name, "\(point.index + 1) of \(runs.count)", String(run.metadata.gitCommit.prefix(10)),
                    HumanFormat.value(point.medianBefore, unit: unit), HumanFormat.value(point.medianAfter, unit: unit),
                    (point.change >= 0 ? "+" : "") + HumanFormat.format(point.change * 100, decimals: 1) + "%",
                    point.pValue < 0.0001 ? "<0.0001" : HumanFormat.format(point.pValue, decimals: 4),
                ])
            }
        }
        print("\(runs.count) runs, \(names.count) metrics, \(table.rows.count) change points\n")
        if !table.rows.isEmpty { print(table.render()) }
    }

    static func gitHistory() -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "rev-list", "--reverse", "HEAD"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return [] }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
