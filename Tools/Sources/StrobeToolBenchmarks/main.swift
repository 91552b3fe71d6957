// `make bench statistics`: the quality and speed of the tools' statistics;
// `make bench compare`: strobe compare's experiment on synthetic suites;
// `make bench history`: the run history's speed on SQLite and PostgreSQL;
// `make bench trend`: `strobe trend` end to end over 10,000 runs.
// `make bench sketch`: the fleet's quantile sketch, accuracy and size;
// `make bench fleet`: the fleet report's rates, ingest and report speed.
// `make bench export`: `strobe export` (pprof, otlp, otlp-json) of a 100 MB
// and a 300 MB trace, speed against the packet decoder alone, and peak memory.
// Prints one JSON line per figure, each with the baseline measured in the
// same process and the ratio between them.

import StrobeTestSupport

let sections = BenchmarkSections(
    program: "StrobeToolBenchmarks",
    all: ["statistics", "changepoints", "compare", "history", "trend", "sketch", "fleet", "export"])
if sections.includes("statistics") {
    DetectorBenchmarks.run()
    ProcessSuiteBenchmarks.run()
}
if sections.includes("changepoints") { ChangePointBenchmarks.run() }
if sections.includes("compare") { CompareBenchmarks.run() }
await sections.run("history", HistoryBenchmarks.run)
await sections.run("trend", TrendBenchmarks.run)
if sections.includes("sketch") { SketchBenchmarks.run() }
await sections.run("fleet", FleetBenchmarks.run)
if sections.includes("export") { ExportBenchmarks.run() }
