// `make bench`: the SDK's benchmarks (the statistics' are in
// Tools/Sources/StrobeToolBenchmarks). Prints one JSON line per figure, each
// with the baseline measured in the same process and the ratio between them.

#if canImport(Glibc)
import Glibc
#endif

let sections = [
    "core", "crash", "triggers", "categories", "async", "session", "format", "reader", "bridges",
    "signposts", "runner", "instructions", "counting", "profile",
]
let arguments = Set(CommandLine.arguments.dropFirst())
let unknown = arguments.subtracting(sections).sorted()
if !unknown.isEmpty {
    let message =
        "StrobeBenchmarks: unknown section \(unknown.joined(separator: ", ")); "
        + "sections: \(sections.joined(separator: " "))\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
if arguments.isEmpty || arguments.contains("core") { CoreBenchmarks.run() }
if arguments.isEmpty || arguments.contains("crash") { CrashCaptureBenchmarks.run() }
if arguments.isEmpty || arguments.contains("triggers") { TriggerBenchmarks.run() }
if arguments.isEmpty || arguments.contains("categories") { CategoryBenchmarks.run() }
if arguments.isEmpty || arguments.contains("async") { AsyncBenchmarks.run() }
if arguments.isEmpty || arguments.contains("session") { SessionBenchmarks.run() }
if arguments.isEmpty || arguments.contains("format") { FormatBenchmarks.run() }
if arguments.isEmpty || arguments.contains("reader") { ReaderBenchmarks.run() }
if arguments.isEmpty || arguments.contains("bridges") {
    #if StrobeMetrics && StrobeTracing
    BridgeBenchmarks.run()
    #else
    let message =
        "StrobeBenchmarks: the bridges section needs the traits StrobeMetrics and StrobeTracing "
        + "(swift build --traits StrobeMetrics,StrobeTracing)\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(2)
    #endif
}
if arguments.isEmpty || arguments.contains("signposts") { SignpostBenchmarks.run() }
if arguments.isEmpty || arguments.contains("runner") { await RunnerBenchmarks.run() }
if arguments.isEmpty || arguments.contains("counting") { CountingBenchmarks.run() }
if arguments.isEmpty || arguments.contains("profile") { ProfileBenchmarks.run() }
// Only when asked for: loops for counting instructions under callgrind.
if arguments.contains("instructions") { InstructionCountBenchmarks.run() }
