// swift-tools-version:6.1

import PackageDescription

let package = Package(
    name: "strobe",
    // Synchronization's Mutex and Atomic, used throughout, need these on
    // Apple platforms; Linux has no minimum.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Strobe", targets: ["Strobe"]),
        .library(name: "StrobeReader", targets: ["StrobeReader"]),
        .library(name: "StrobePerf", targets: ["StrobePerf"]),
        .library(name: "StrobeStatistics", targets: ["StrobeStatistics"]),
        .library(name: "StrobeDiff", targets: ["StrobeDiff"]),
        .library(name: "StrobeMetrics", targets: ["StrobeMetrics"]),
        .library(name: "StrobeTracing", targets: ["StrobeTracing"]),
        .executable(name: "strobe", targets: ["StrobeCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // MARK: C foundations

        .systemLibrary(
            name: "CProtobufC",
            pkgConfig: "libprotobuf-c",
            providers: [.apt(["libprotobuf-c-dev"])]
        ),
        .target(name: "StrobeProtos", dependencies: ["CProtobufC"]),
        .target(name: "CStrobe"),
        // USDT probes; `sys/sdt.h` comes from Debian's systemtap-sdt-dev.
        .target(name: "CStrobeProbes"),
        // The category glob matcher, shared by the SDK and the reader.
        .target(name: "StrobeCategoryPattern"),
        // Perfetto's field numbers, tags and enum values, for the hand-written
        // encoder and decoder; no dependencies.
        .target(name: "PerfettoWire"),

        // MARK: The SDK

        .target(
            name: "Strobe",
            dependencies: ["CStrobe", "CStrobeProbes", "PerfettoWire", "StrobeCategoryPattern", "StrobeProtos", "CProtobufC"]
        ),

        // MARK: Bridges

        .target(
            name: "StrobeMetrics",
            dependencies: ["Strobe", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .target(
            name: "StrobeTracing",
            dependencies: ["Strobe", .product(name: "Tracing", package: "swift-distributed-tracing")]
        ),

        // MARK: Analysis

        // Tables, human units and CSV fields, shared by the readers and reports.
        .target(name: "StrobeFormatting"),
        .target(
            name: "StrobeReader",
            dependencies: ["PerfettoWire", "StrobeProtos", "CProtobufC", "StrobeFormatting", "StrobeCategoryPattern"]
        ),
        // The results model and file: what the runner writes and diff reads.
        .target(name: "StrobeResults", dependencies: ["StrobeProtos", "CProtobufC", "StrobeFormatting"]),
        .target(name: "StrobeStatistics"),
        .target(
            name: "StrobeDiff",
            dependencies: ["StrobeStatistics", "StrobeResults", "StrobeFormatting", .product(name: "Yams", package: "Yams")]
        ),
        .target(
            name: "StrobePerf",
            dependencies: ["Strobe", "CStrobe", "StrobeReader", "StrobeResults"]
        ),
        .executableTarget(
            name: "StrobeCLI",
            dependencies: [
                "Strobe", "StrobeReader", "StrobePerf", "StrobeResults", "StrobeStatistics", "StrobeDiff", "StrobeFormatting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Benchmarks (`make bench`)

        .target(name: "CMallocCounter"),
        .executableTarget(
            name: "StrobeBenchmarks",
            dependencies: [
                "Strobe", "StrobeReader", "StrobeDiff", "StrobeMetrics", "StrobeTracing", "StrobePerf", "StrobeProtos",
                "CProtobufC",
                "CStrobe", "CMallocCounter", .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),

        // MARK: Fuzzing (`make fuzz`)

        .executableTarget(name: "StrobeFuzz", dependencies: ["StrobeReader", "StrobeResults", "StrobeDiff", "Strobe"]),

        // MARK: Examples

        .target(name: "LensKit", dependencies: ["Strobe"], path: "Examples/LensKit"),
        .executableTarget(name: "LensPipeline", dependencies: ["LensKit", "Strobe"], path: "Examples/LensPipeline"),
        .executableTarget(
            name: "LensPerfTests", dependencies: ["LensKit", "Strobe", "StrobePerf"], path: "Examples/LensPerfTests",
            exclude: ["strobe-policy.yml"]
        ),
        .executableTarget(name: "TraceChild", dependencies: ["Strobe"], path: "Examples/TraceChild"),
        // The Swift snippets of README.md, compiled; ReadmeSnippetTests checks
        // that each README block is one of them.
        .target(
            name: "ReadmeSnippets",
            dependencies: [
                "Strobe", "StrobePerf", "StrobeReader", "StrobeTracing", "LensKit",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Examples/ReadmeSnippets"
        ),

        // MARK: Tests

        // Helpers the test targets share: the official-decoder bridge and a
        // program runner.
        .target(name: "StrobeTestSupport", path: "Tests/StrobeTestSupport"),

        .testTarget(
            name: "StrobeTests",
            dependencies: [
                "Strobe", "StrobeReader", "StrobeProtos", "CProtobufC", "CStrobe", "StrobeTestSupport", "LensPipeline", "TraceChild",
            ]
        ),
        .testTarget(
            name: "StrobeMetricsTests",
            dependencies: ["StrobeMetrics", "Strobe", "StrobeReader", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .testTarget(
            name: "StrobeTracingTests",
            dependencies: [
                "StrobeTracing", "Strobe", "StrobeReader", "StrobeTestSupport", .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(name: "StrobeReaderTests", dependencies: ["Strobe", "StrobeReader"]),
        .testTarget(name: "StrobeStatisticsTests", dependencies: ["StrobeStatistics", "StrobeDiff"]),
        .testTarget(name: "StrobeDiffTests", dependencies: ["StrobeDiff", "StrobeStatistics", "StrobePerf", "StrobeCLI", "StrobeTestSupport"]),
        // Every `strobe` subcommand, run as a user runs it.
        .testTarget(
            name: "StrobeCLITests",
            dependencies: ["Strobe", "StrobeReader", "StrobeResults", "StrobeCLI", "StrobeTestSupport", "TraceChild"]
        ),
        .testTarget(
            name: "StrobePerfTests",
            dependencies: ["StrobePerf", "Strobe", "StrobeReader", "StrobeDiff", "LensKit", "TraceChild"]
        ),
    ]
)

for target in package.targets where target.type != .system {
    guard target.type != .binary, target.type != .plugin else { continue }
    if target.name.hasPrefix("C") || target.name == "StrobeProtos" { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
