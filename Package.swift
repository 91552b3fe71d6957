// swift-tools-version:6.1

import PackageDescription

// The packages the bridges bridge to, each resolved only when its bridge's
// trait is on.
let coreMetrics: Target.Dependency = .product(
    name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["StrobeMetrics"]))
let tracing: Target.Dependency = .product(
    name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["StrobeTracing"]))

// The package an app depends on: the tracing SDK, the trace reader, the
// results model and the perf-test runner, with no package of anyone else's.
// The bridges to swift-metrics and swift-distributed-tracing are behind
// package traits of their own names, so only an app that enables one
// resolves the package it bridges to. The `strobe` command, the regression
// gate, the results store and their dependencies are in Tools/, a second
// package that depends on this one (see ARCHITECTURE.md).
let package = Package(
    name: "strobe",
    // Synchronization's Mutex and Atomic, used throughout, need these on
    // Apple platforms; Linux has no minimum.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Strobe", targets: ["Strobe"]),
        .library(name: "StrobeReader", targets: ["StrobeReader"]),
        .library(name: "StrobeResults", targets: ["StrobeResults"]),
        .library(name: "StrobePerf", targets: ["StrobePerf"]),
        .library(name: "StrobeProcessRunner", targets: ["StrobeProcessRunner"]),
        .library(name: "StrobeCrashRecovery", targets: ["StrobeCrashRecovery"]),
        .library(name: "StrobeMetrics", targets: ["StrobeMetrics"]),
        .library(name: "StrobeTracing", targets: ["StrobeTracing"]),
    ],
    traits: [
        .trait(name: "StrobeMetrics", description: "Builds StrobeMetrics, the swift-metrics backend."),
        .trait(name: "StrobeTracing", description: "Builds StrobeTracing, the swift-distributed-tracing tracer."),
    ],
    dependencies: [
        // The runner parses its own command line, so an app resolves none of
        // these unless it enables the trait that names the bridge.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // MARK: C foundations

        .systemLibrary(
            name: "CProtobufC",
            pkgConfig: "libprotobuf-c",
            providers: [.apt(["libprotobuf-c-dev"]), .brew(["protobuf-c"])]
        ),
        .target(name: "StrobeProtos", dependencies: ["CProtobufC"]),
        // The record and crash-file layouts, headers only: what the runtime
        // writes and the encoder and crash recovery read.
        .target(name: "CStrobeLayout"),
        .target(name: "CStrobe", dependencies: ["CStrobeLayout"]),
        // USDT probes; `sys/sdt.h` comes from Debian's systemtap-sdt-dev.
        .target(name: "CStrobeProbes"),
        // The category glob matcher, shared by the SDK and the reader.
        .target(name: "StrobeCategoryPattern"),
        // Perfetto's field numbers, tags and enum values, for the hand-written
        // encoder and decoder; no dependencies.
        .target(name: "PerfettoWire"),

        // MARK: The SDK

        // Records to Perfetto packets: the record layout, the trace encoder
        // and the trace file, with none of the recording runtime, so that
        // crash recovery encodes without linking it.
        .target(name: "StrobeEncoding", dependencies: ["CStrobeLayout", "PerfettoWire", "StrobeProtos", "CProtobufC"]),
        .target(
            name: "Strobe",
            dependencies: [
                "CStrobe", "CStrobeProbes", "PerfettoWire", "StrobeCategoryPattern", "StrobeProtos", "CProtobufC",
                "StrobeEncoding", "StrobeFormatting",
            ]
        ),

        // The offline half of crash capture: reads a crash file and writes the
        // trace with the encoder (`strobe recover`), without the SDK.
        .target(name: "StrobeCrashRecovery", dependencies: ["StrobeEncoding", "CStrobeLayout", "StrobeFormatting"]),

        // MARK: Bridges (each behind the package trait of its name)

        .target(name: "StrobeMetrics", dependencies: ["Strobe", coreMetrics]),
        .target(name: "StrobeTracing", dependencies: ["Strobe", tracing]),

        // MARK: Reading traces and results

        // Tables, human units and CSV fields, shared by the readers and reports.
        .target(name: "StrobeFormatting"),
        .target(
            name: "StrobeReader",
            dependencies: [
                "PerfettoWire", "StrobeProtos", "CProtobufC", "StrobeFormatting", "StrobeCategoryPattern",
                "StrobeResults",
            ]
        ),
        // The results model and file: what the runner writes and the tools read.
        .target(name: "StrobeResults", dependencies: ["StrobeProtos", "CProtobufC", "StrobeFormatting"]),

        // MARK: The perf-test runner

        // Runs suites as child processes and reads what they wrote; it links
        // no recording runtime, so the `strobe` CLI uses it for `run` and
        // `compare`.
        .target(name: "CStrobeProcess"),
        .target(
            name: "StrobeProcessRunner",
            dependencies: ["CStrobeProcess", "StrobeReader", "StrobeResults", "StrobeFormatting"]
        ),
        // Suites that run in the process: setup and measure blocks traced by
        // the SDK.
        // Exact counts of a measure block: wraps malloc and its family and
        // hooks the Swift runtime's retains and releases. Only StrobePerf and
        // the benchmarks link it, so an app of the SDK alone keeps its malloc.
        .target(name: "CStrobeCounting", dependencies: ["CStrobe"]),
        .target(
            name: "StrobePerf",
            dependencies: [
                "Strobe", "StrobeProcessRunner", "StrobeReader", "StrobeResults", "StrobeFormatting", "CStrobeCounting",
                "PerfettoWire",
            ],
            // QEMU's counting plugin, compiled on the machine that runs it:
            // its text is in QEMUCountingPluginSource.swift
            // (scripts/generate-plugin-source.sh), so a `strobe` binary is
            // self-contained.
            exclude: ["EmulationPlugin/QEMUCountingPlugin.c"]
        ),

        // MARK: Benchmarks of the SDK (`make bench`)

        .executableTarget(
            name: "StrobeBenchmarks",
            dependencies: [
                "Strobe", "StrobeReader", "StrobeMetrics", "StrobeTracing", "StrobePerf", "StrobeProtos", "CProtobufC",
                "CStrobe", "CStrobeCounting", "StrobeProcessRunner", "StrobeTestSupport", "ProfileWorkload",
                coreMetrics, tracing,
            ]
        ),

        // MARK: Examples

        .target(name: "LensKit", dependencies: ["Strobe"], path: "Examples/LensKit"),
        .executableTarget(name: "LensPipeline", dependencies: ["LensKit", "Strobe"], path: "Examples/LensPipeline"),
        .executableTarget(
            name: "LensPerfTests", dependencies: ["LensKit", "Strobe", "StrobePerf"], path: "Examples/LensPerfTests",
            exclude: ["strobe-policy.yml"]
        ),
        .executableTarget(
            name: "TraceChild", dependencies: ["Strobe", "StrobeTestSupport"], path: "Examples/TraceChild"),
        // A perf suite of three functions of known work, one of which
        // PROFILE_SUITE_SLOWER makes 10% slower: the truth `strobe compare
        // --profile` is checked against.
        .executableTarget(
            name: "ProfileSuite", dependencies: ["Strobe", "StrobePerf"], path: "Examples/ProfileSuite"
        ),
        // A CPU-bound workload with known shares per function: the truth the
        // CPU profiler's tests and benchmarks check against.
        .target(name: "ProfileWorkload", dependencies: ["Strobe"], path: "Examples/ProfileWorkload"),
        // The Swift snippets of README.md and docs/*.md, compiled;
        // ReadmeSnippetTests checks that each block is one of them.
        .target(
            name: "ReadmeSnippets",
            dependencies: [
                "Strobe", "StrobePerf", "StrobeReader", "StrobeTracing", "LensKit", tracing,
            ],
            path: "Examples/ReadmeSnippets"
        ),

        // MARK: Tests (`make test` runs these and the tools package's)

        // Helpers the test targets and benchmarks of both packages share: the
        // official-decoder bridge, a program runner and the figure printer.
        // Their folders are the products of the package in Tests/Support,
        // which the tools package depends on; this package cannot (an app
        // would resolve a local package), so it compiles them as targets
        // that no product names.
        .target(name: "StrobeTestSupport", path: "Tests/Support/Sources/StrobeTestSupport"),
        // The `.processWide` suite trait: suites that use the trace session or
        // other state of the whole process take turns, so `swift test` needs
        // no `--no-parallel`. Test targets only; it links swift-testing.
        .target(name: "StrobeTestTraits", path: "Tests/Support/Sources/StrobeTestTraits"),

        .testTarget(
            name: "StrobeTests",
            dependencies: [
                "Strobe", "StrobeCrashRecovery", "StrobeEncoding", "StrobeReader", "StrobeProtos", "CProtobufC",
                "CStrobe", "StrobeTestSupport", "StrobeTestTraits",
                "LensPipeline", "TraceChild", "ProfileWorkload",
            ]
        ),
        // Many threads at once and ten thousand in turn: run when
        // STROBE_STRESS_TESTS=1 (`make test`, `make test-stress`).
        .testTarget(
            name: "StrobeStressTests",
            dependencies: ["Strobe", "StrobeReader", "StrobeTestSupport", "StrobeTestTraits", "TraceChild"]
        ),
        .testTarget(
            name: "StrobeMetricsTests",
            dependencies: ["StrobeMetrics", "Strobe", "StrobeReader", "StrobeTestTraits", coreMetrics]),
        .testTarget(
            name: "StrobeTracingTests",
            dependencies: ["StrobeTracing", "Strobe", "StrobeReader", "StrobeTestSupport", "StrobeTestTraits", tracing]
        ),
        .testTarget(name: "StrobeReaderTests", dependencies: ["Strobe", "StrobeReader", "StrobeTestTraits"]),
        .testTarget(
            name: "StrobePerfTests",
            dependencies: [
                "StrobePerf", "StrobeProcessRunner", "StrobeResults", "Strobe", "StrobeReader", "PerfettoWire",
                "StrobeTestSupport", "StrobeTestTraits", "LensKit", "TraceChild", "ProfileSuite", "CStrobeCounting",
            ]),
    ]
)

for target in package.targets where target.type != .system {
    guard target.type != .binary, target.type != .plugin else { continue }
    if target.name.hasPrefix("C") || target.name == "StrobeProtos" { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
