// `make bench statistics`: the quality and speed of the tools' statistics;
// `make bench compare`: strobe compare's experiment on synthetic suites;
// `make bench history`: the run history's speed on SQLite and PostgreSQL;
// `make bench trend`: `strobe trend` end to end over 10,000 runs.
// `make bench sketch`: the fleet's quantile sketch, accuracy and size;
// `make bench fleet`: the fleet report's rates, ingest and report speed.
// `make bench export`: `strobe export --format otlp` of a 100 MB trace, speed
// and peak memory.
// Prints one JSON line per figure, each with the baseline measured in the
// same process and the ratio between them.

#if canImport(Glibc)
import Glibc
#endif

let sections = ["statistics", "changepoints", "compare", "history", "trend", "sketch", "fleet", "export"]
let arguments = Set(CommandLine.arguments.dropFirst())
let unknown = arguments.subtracting(sections).sorted()
if !unknown.isEmpty {
    let message =
        "StrobeToolBenchmarks: unknown section \(unknown.joined(separator: ", ")); "
        + "sections: \(sections.joined(separator: " "))\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
if arguments.isEmpty || arguments.contains("statistics") {
    DetectorBenchmarks.run()
    ProcessSuiteBenchmarks.run()
}
if arguments.isEmpty || arguments.contains("changepoints") { ChangePointBenchmarks.run() }
if arguments.isEmpty || arguments.contains("compare") { CompareBenchmarks.run() }
if arguments.isEmpty || arguments.contains("history") { await HistoryBenchmarks.run() }
if arguments.isEmpty || arguments.contains("trend") { await TrendBenchmarks.run() }
if arguments.isEmpty || arguments.contains("sketch") { SketchBenchmarks.run() }
if arguments.isEmpty || arguments.contains("fleet") { await FleetBenchmarks.run() }
if arguments.isEmpty || arguments.contains("export") { ExportBenchmarks.run() }
