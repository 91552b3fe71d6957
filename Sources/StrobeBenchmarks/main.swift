// `make bench`: the SDK's benchmarks (the statistics' are in
// Tools/Sources/StrobeToolBenchmarks). Prints one JSON line per figure, each
// with the baseline measured in the same process and the ratio between them.

import StrobeTestSupport

let sections = BenchmarkSections(
    program: "StrobeBenchmarks",
    all: [
        "core", "crash", "triggers", "categories", "async", "session", "format", "reader", "bridges",
        "signposts", "runner", "instructions", "counting", "profile",
    ])
if sections.includes("core") { CoreBenchmarks.run() }
if sections.includes("crash") { CrashCaptureBenchmarks.run() }
if sections.includes("triggers") { TriggerBenchmarks.run() }
if sections.includes("categories") { CategoryBenchmarks.run() }
if sections.includes("async") { AsyncBenchmarks.run() }
if sections.includes("session") { SessionBenchmarks.run() }
if sections.includes("format") { FormatBenchmarks.run() }
if sections.includes("reader") { ReaderBenchmarks.run() }
if sections.includes("bridges") {
    #if StrobeMetrics && StrobeTracing
    BridgeBenchmarks.run()
    #else
    sections.fail(
        "the bridges section needs the traits StrobeMetrics and StrobeTracing "
            + "(swift build --traits StrobeMetrics,StrobeTracing)",
        status: 2)
    #endif
}
if sections.includes("signposts") { SignpostBenchmarks.run() }
if sections.includes("runner") { await RunnerBenchmarks.run() }
if sections.includes("counting") { CountingBenchmarks.run() }
if sections.includes("profile") { ProfileBenchmarks.run() }
// Only when asked for: loops for counting instructions under callgrind.
if sections.named.contains("instructions") { InstructionCountBenchmarks.run() }
