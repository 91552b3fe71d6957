// `make bench`: prints one JSON line per figure, each with the baseline
// measured in the same process and the ratio between them.

let arguments = Set(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("core") { CoreBenchmarks.run() }
if arguments.isEmpty || arguments.contains("crash") { CrashCaptureBenchmarks.run() }
if arguments.isEmpty || arguments.contains("triggers") { TriggerBenchmarks.run() }
if arguments.isEmpty || arguments.contains("categories") { CategoryBenchmarks.run() }
if arguments.isEmpty || arguments.contains("async") { AsyncBenchmarks.run() }
if arguments.isEmpty || arguments.contains("session") { SessionBenchmarks.run() }
if arguments.isEmpty || arguments.contains("format") { FormatBenchmarks.run() }
if arguments.isEmpty || arguments.contains("reader") { ReaderBenchmarks.run() }
if arguments.isEmpty || arguments.contains("statistics") { DetectorBenchmarks.run() }
if arguments.isEmpty || arguments.contains("bridges") { BridgeBenchmarks.run() }
if arguments.isEmpty || arguments.contains("signposts") { SignpostBenchmarks.run() }
if arguments.isEmpty || arguments.contains("runner") { await RunnerBenchmarks.run() }
