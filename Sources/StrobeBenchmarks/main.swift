import StrobeTracing
// `make bench`: prints one JSON line per figure, each with the baseline
// measured in the same process and the ratio between them.

let arguments = Set(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("core") { CoreBenchmarks.run() }
if arguments.isEmpty || arguments.contains("categories") { CategoryBenchmarks.run() }
if arguments.isEmpty || arguments.contains("async") { AsyncBenchmarks.run() }
if arguments.isEmpty || arguments.contains("format") { FormatBenchmarks.run() }
if arguments.isEmpty || arguments.contains("reader") { ReaderBenchmarks.run() }
if arguments.isEmpty || arguments.contains("statistics") { DetectorBenchmarks.run() }
if arguments.isEmpty || arguments.contains("bridges") { BridgeBenchmarks.run() }
if arguments.isEmpty || arguments.contains("signposts") { SignpostBenchmarks.run() }
if arguments.contains("span-profile") {
    // Only the direct span loop, for a profiler.
    _ = StrobeTracer()
    for _ in 0..<5 {
        _ = CoreBenchmarks.withSession(BridgeBenchmarks.spanConfiguration) { timeSpans(StrobeTracer(), 400_000) }
    }
}
