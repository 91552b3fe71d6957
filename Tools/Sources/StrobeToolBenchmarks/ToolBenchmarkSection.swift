import Foundation

/// What the sections of the tool benchmarks print and use around their
/// figures.
enum ToolBenchmarkSection {
    /// Prints the line that opens section `name`'s figures: the section, the
    /// CPU model and the core count, and with `loadAverage` the load
    /// averages (for sections that time whole commands).
    static func printOpeningLine(_ name: String, loadAverage: Bool = false) {
        var line =
            "{\"section\":\"\(name)\",\"cpu\":\"\(HistoryBenchmarks.cpuModel())\","
            + "\"cores\":\(ProcessInfo.processInfo.activeProcessorCount)"
        if loadAverage { line += ",\"load_average\":\"\(TrendBenchmarks.loadAverage())\"" }
        print(line + "}")
    }

    /// Runs `body` with a scratch directory of section `name`'s own
    /// (`strobe-NAME-bench-PID` in the temporary directory), removed after.
    static func withScratchDirectory(_ name: String, _ body: (String) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strobe-\(name)-bench-\(getpid())")
            .path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try await body(scratch)
    }
}
