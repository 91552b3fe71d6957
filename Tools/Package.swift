// swift-tools-version:6.1

import PackageDescription

// strobe-tools: the `strobe` command and what only it needs (the regression
// gate's statistics, the diff and its reports, policy files in YAML), with
// their tests, fuzzers and benchmarks. A package of its own beside the SDK's
// (the repository root), so that none of its dependencies ever reaches an app
// that records traces or runs perf suites. Build the command with
// `swift build -c release --package-path Tools --product strobe` (or
// `make strobe`).
//
// Two builds of `strobe`: the default one, lean, holds every command a CI
// job or a developer runs (compare, diff, run, results, export to files,
// history and trend on SQLite or PostgreSQL, summarize, repair, recover,
// ingest, fleet) and builds none of the server stack; the package trait
// `Server` adds `strobe serve` (Hummingbird on SwiftNIO) and the OTLP/HTTP
// sender of `--otlp-endpoint` (SwiftNIO): `--traits Server`, as the Makefile
// and the scripts build it. Without the trait, SwiftPM still resolves those
// packages but compiles none of them.
let server: TargetDependencyCondition? = .when(traits: ["Server"])

let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// Products of the SDK package (the repository root), by name.
func strobe(_ products: String...) -> [Target.Dependency] {
    products.map { .product(name: $0, package: "strobe") }
}

/// What the tests and benchmarks share: the program runner and the figure
/// printer, and the `.processWide` suite trait (tests only).
let testSupport: Target.Dependency = .product(name: "StrobeTestSupport", package: "strobe-test-support")
let testTraits: Target.Dependency = .product(name: "StrobeTestTraits", package: "strobe-test-support")

let package = Package(
    name: "strobe-tools",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strobe", targets: ["StrobeCLI"]),
        .library(name: "StrobeStatistics", targets: ["StrobeStatistics"]),
        .library(name: "StrobeJudgement", targets: ["StrobeJudgement"]),
        .library(name: "StrobeDiff", targets: ["StrobeDiff"]),
        .library(name: "StrobeHistory", targets: ["StrobeHistory", "StrobeHistoryStore", "StrobeTrend"]),
    ],
    traits: [
        .trait(
            name: "Server",
            description: "strobe serve (Hummingbird, SwiftNIO) and the OTLP/HTTP sender of --otlp-endpoint (SwiftNIO)"),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // With the tracing bridge's trait on, as Examples/ServerTracing sets it:
        // the SDK's modules compile with the same flags in both, so the example
        // built in this package's build directory (as CI builds it) reuses them.
        // No target here uses the bridge, so nothing more is built.
        .package(name: "strobe", path: "..", traits: ["StrobeTracing"]),
        // What the tests of both packages share (the program runner, the
        // figure printer, the `.processWide` suite trait); no app resolves it.
        .package(name: "strobe-test-support", path: "../Tests/Support"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Policy files; both majors build.
        .package(url: "https://github.com/jpsim/Yams", "5.0.1"..<"7.0.0"),
        // `strobe serve`, the HTTP ingest endpoint (without swift-configuration
        // support, which it does not use).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The OTLP/HTTP sender's client (plain HTTP; no TLS is compiled in),
        // the event loops Hummingbird already runs on.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
    ],
    targets: [
        // The statistics and the diff are compiled with optimization even in
        // debug builds: their tests simulate thousands of suites (the
        // false-alarm and power bars), which take minutes unoptimized.
        // Aligned text tables, human units, CSV fields and HTML escaping for
        // the reports: the sources of the root package's internal
        // StrobeFormatting (the folder is a link to them), compiled here
        // under a name of its own, so the package an app depends on offers
        // no product for them.
        .target(name: "StrobeToolFormatting"),
        // Judges the metrics of results files, so it takes their model's
        // MetricDirection (StrobeResults adds only StrobeProtos and
        // CProtobufC).
        .target(name: "StrobeStatistics", dependencies: strobe("StrobeResults"), swiftSettings: optimizedInDebug),
        // Everything that turns a comparison's numbers into verdicts: the
        // policy, the verdict per metric and per test, the functions behind
        // them, and what a sequential comparison has decided so far.
        .target(
            name: "StrobeJudgement",
            dependencies: ["StrobeStatistics", "StrobeToolFormatting", .product(name: "Yams", package: "Yams")]
                + strobe("StrobeResults"),
            swiftSettings: optimizedInDebug
        ),
        // Differential flame graphs: two sides' call stacks merged into one
        // icicle, each frame marked by its change, for every HTML report.
        .target(name: "StrobeFlameGraph", dependencies: ["StrobeToolFormatting"] + strobe("StrobeResults")),
        // Two sides of traces compared per interval name (`strobe
        // diff-traces`), with the flame graphs of the samples inside.
        .target(
            name: "StrobeTraceComparison",
            dependencies: ["StrobeStatistics", "StrobeFlameGraph", "StrobeToolFormatting"]
                + strobe("StrobeReader", "StrobeResults"),
            swiftSettings: optimizedInDebug
        ),
        // Loads runs into sample sets and renders the judgement's reports.
        .target(
            name: "StrobeDiff",
            dependencies: ["StrobeJudgement", "StrobeStatistics", "StrobeFlameGraph", "StrobeToolFormatting"]
                + strobe("StrobeResults"),
            swiftSettings: optimizedInDebug
        ),
        // Synthetic suites and fleets that measure the gate and the fleet
        // report (false alarms, power, interval coverage), and the bootstrap
        // that checks Woodruff's intervals: for the tests and the
        // benchmarks only, so no product links them.
        .target(
            name: "StrobeSimulations",
            dependencies: ["StrobeStatistics", "StrobeJudgement", "StrobeDiff", "StrobeCompare"]
                + strobe("StrobeResults"),
            swiftSettings: optimizedInDebug
        ),
        // SQLite's C library, for the run history's SQLite store.
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // PostgreSQL's own C client library, for the run history's
        // PostgreSQL store.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // OpenSSL's libcrypto, for the SHA-256 that names runs whose files
        // carry no run id (libpq links it too).
        .systemLibrary(
            name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // zlib, for the gzip of `strobe export --format pprof` (the reader
        // gives the protobuf bytes; an app's products link no zlib).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // The run history's model: runs as a history stores and returns them
        // (with each process's summaries), loading results files into them,
        // exporting them, marks on change points, queries.
        .target(
            name: "StrobeHistory",
            dependencies: ["StrobeStatistics", "StrobeToolFormatting", "StrobeFlameGraph", "CLibCrypto"]
                + strobe("StrobeResults")
        ),
        // A PostgreSQL client on libpq (`package` API only).
        .target(name: "StrobePostgres", dependencies: ["CLibPQ"]),
        // The run history's stores (SQLite through a wrapper of its own over
        // CSQLite, PostgreSQL through StrobePostgres) and the fleet's tables
        // in them.
        .target(
            name: "StrobeHistoryStore",
            dependencies: ["StrobeHistory", "StrobeFlameGraph", "StrobePostgres", "CSQLite"] + strobe("StrobeResults")
        ),
        // The trend over a history's runs: change points pinned to runs, and
        // its reports.
        .target(
            name: "StrobeTrend",
            dependencies: ["StrobeHistory", "StrobeStatistics", "StrobeToolFormatting", "StrobeFlameGraph"]
                + strobe("StrobeResults")
        ),
        // A fleet's traces: extraction into the store, and the fleet report.
        .target(
            name: "StrobeFleet",
            dependencies: [
                "StrobeStatistics", "StrobeJudgement", "StrobeHistory", "StrobeHistoryStore", "StrobeToolFormatting",
            ] + strobe("StrobeReader", "StrobeResults"),
            swiftSettings: optimizedInDebug
        ),
        // The HTTP ingest endpoint (`strobe serve`) over the fleet's
        // extraction and store.
        .target(
            name: "StrobeServer",
            dependencies: [
                "StrobeFleet", "StrobeHistoryStore", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `strobe compare`'s experiment: rounds, looks, the time budget,
        // over a runner of processes that tests can replace.
        .target(
            name: "StrobeCompare",
            dependencies: ["StrobeStatistics", "StrobeJudgement", "StrobeDiff", "StrobeToolFormatting"]
                + strobe("StrobeProcessRunner", "StrobeResults")
        ),
        // `--otlp-endpoint`: a trace's OTLP requests posted over OTLP/HTTP,
        // in batches, with retries.
        .target(
            name: "StrobeOTLP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ] + strobe("StrobeReader")
        ),
        // The commit `strobe --version` names (scripts/build-commit.sh).
        .target(name: "CStrobeBuildInfo"),
        .executableTarget(
            name: "StrobeCLI",
            dependencies: [
                "StrobeStatistics", "StrobeJudgement", "StrobeDiff", "StrobeCompare", "StrobeHistory",
                "StrobeHistoryStore", "StrobeTrend", "StrobeFleet", "StrobeFlameGraph", "StrobeTraceComparison",
                "CStrobeBuildInfo", "CZlib", "StrobeToolFormatting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .target(name: "StrobeServer", condition: server), .target(name: "StrobeOTLP", condition: server),
            ] + strobe("StrobeCrashRecovery", "StrobeReader", "StrobeProcessRunner", "StrobeResults")
        ),

        // MARK: Benchmarks of the statistics and the history (`make bench statistics history`)

        .executableTarget(
            name: "StrobeToolBenchmarks",
            dependencies: [
                "StrobeStatistics", "StrobeJudgement", "StrobeDiff", "StrobeHistory", "StrobeHistoryStore",
                "StrobeTrend", "StrobeFleet", "StrobeSimulations", "StrobeCompare", testSupport,
            ] + strobe("Strobe", "StrobeProcessRunner", "StrobeReader", "StrobeResults")
        ),

        // MARK: Fuzzing (`make fuzz`)

        .executableTarget(
            name: "StrobeFuzz",
            dependencies: ["StrobeJudgement", "StrobeDiff"]
                + strobe("StrobeCrashRecovery", "StrobeReader", "StrobeResults")
        ),

        // MARK: Tests

        // A scratch store of either backend (PostgreSQL's a throwaway cluster
        // the tests start themselves), runs and the `strobe` binary for the
        // store, history, trend, fleet and server tests.
        .target(
            name: "StrobeStoreTestSupport",
            dependencies: [
                "StrobeHistory", "StrobeHistoryStore", "StrobePostgres", "CSQLite", testSupport,
            ] + strobe("StrobeResults"),
            path: "Tests/StrobeStoreTestSupport"),
        // Seeded sessions for the tests of percentiles over sessions.
        .target(
            name: "StrobeStatisticsTestSupport", dependencies: ["StrobeStatistics"],
            path: "Tests/StrobeStatisticsTestSupport"),
        .testTarget(
            name: "StrobeStatisticsTests",
            dependencies: ["StrobeStatistics", "StrobeSimulations", "StrobeStatisticsTestSupport"]),
        // The verdicts, on replicates and sample sets built in the tests
        // (the reports some of them check are rendered by StrobeDiff).
        .testTarget(
            name: "StrobeJudgementTests",
            dependencies: [
                "StrobeJudgement", "StrobeStatistics", "StrobeDiff", "StrobeSimulations", "StrobeStatisticsTestSupport",
            ] + strobe("StrobeProcessRunner", "StrobeResults")
        ),
        .testTarget(
            name: "StrobeDiffTests",
            dependencies: [
                "StrobeDiff", "StrobeJudgement", "StrobeStatistics", "StrobeSimulations", "StrobeCompare", "StrobeCLI",
                "StrobeFlameGraph", "StrobeTraceComparison", "StrobeToolFormatting", testSupport,
            ] + strobe("StrobeProcessRunner", "StrobeReader", "StrobeResults")
        ),
        // `strobe compare`'s experiment, with a runner of its own.
        .testTarget(
            name: "StrobeCompareTests",
            dependencies: ["StrobeCompare", "StrobeJudgement", "StrobeDiff", "StrobeStatistics", "StrobeSimulations"]
                + strobe("StrobeProcessRunner", "StrobeResults")
        ),
        // The run history's model through both stores.
        .testTarget(
            name: "StrobeHistoryTests",
            dependencies: [
                "StrobeHistory", "StrobeHistoryStore", "StrobeStatistics", "StrobeCLI", "StrobeStoreTestSupport",
                "StrobeFlameGraph",
            ] + strobe("StrobeResults")
        ),
        // The stores on SQLite and on PostgreSQL; runs the `strobe` binary
        // for the killed writer.
        .testTarget(
            name: "StrobeHistoryStoreTests",
            dependencies: [
                "StrobeHistory", "StrobeHistoryStore", "StrobePostgres", "StrobeCLI", "StrobeStoreTestSupport",
            ] + strobe("StrobeResults")
        ),
        // The libpq client against the test server.
        .testTarget(
            name: "StrobePostgresTests",
            dependencies: ["StrobeHistory", "StrobeHistoryStore", "StrobePostgres", "StrobeStoreTestSupport"]
        ),
        // The trend over stored runs and results files, through `strobe trend`.
        .testTarget(
            name: "StrobeTrendTests",
            dependencies: [
                "StrobeTrend", "StrobeHistory", "StrobeHistoryStore", "StrobeStatistics", "StrobeCLI",
                "StrobeStoreTestSupport", "StrobeFlameGraph", testSupport,
            ] + strobe("StrobeResults")
        ),
        // The ingest endpoint, over HTTP on loopback (URLSession: no TLS
        // stack is built for the tests); with the `Server` trait only.
        .testTarget(
            name: "StrobeServerTests",
            dependencies: [
                "StrobeFleet", "StrobeHistoryStore", "StrobeStoreTestSupport", testSupport, testTraits,
                .target(name: "StrobeServer", condition: server),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
            ] + strobe("Strobe")
        ),
        // Ingest and the fleet report, on traces the SDK writes.
        .testTarget(
            name: "StrobeFleetTests",
            dependencies: [
                "StrobeFleet", "StrobeHistory", "StrobeHistoryStore", "StrobePostgres", "StrobeStatistics",
                "StrobeJudgement", "StrobeDiff", "StrobeSimulations", "StrobeCLI", "StrobeStoreTestSupport",
                "StrobeStatisticsTestSupport", testSupport, testTraits,
            ] + strobe("Strobe", "StrobeReader", "StrobeResults")
        ),
        // Every `strobe` subcommand, run as a user runs it.
        .testTarget(
            name: "StrobeCLITests",
            dependencies: ["StrobeCLI", .target(name: "StrobeOTLP", condition: server), testSupport, testTraits]
                + strobe("Strobe", "StrobeReader", "StrobeResults")
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
