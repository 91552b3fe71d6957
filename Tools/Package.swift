// swift-tools-version:6.1

import PackageDescription

// strobe-tools: the `strobe` command and what only it needs (the regression
// gate's statistics, the diff and its reports, policy files in YAML), with
// their tests, fuzzers and benchmarks. A package of its own beside the SDK's
// (the repository root), so that none of its dependencies ever reaches an app
// that records traces or runs perf suites. Build the command with
// `swift build -c release --package-path Tools --product strobe` (or
// `make strobe`).
let package = Package(
    name: "strobe-tools",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strobe", targets: ["StrobeCLI"]),
        .library(name: "StrobeStatistics", targets: ["StrobeStatistics"]),
        .library(name: "StrobeDiff", targets: ["StrobeDiff"]),
    ],
    dependencies: [
        .package(name: "strobe", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Policy files; both majors build.
        .package(url: "https://github.com/jpsim/Yams", "5.0.1"..<"7.0.0"),
    ],
    targets: [
        .target(name: "StrobeStatistics"),
        .target(
            name: "StrobeDiff",
            dependencies: [
                "StrobeStatistics",
                .product(name: "StrobeResults", package: "strobe"),
                .product(name: "StrobeFormatting", package: "strobe"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "StrobeCLI",
            dependencies: [
                "StrobeStatistics", "StrobeDiff",
                .product(name: "Strobe", package: "strobe"),
                .product(name: "StrobeReader", package: "strobe"),
                .product(name: "StrobePerf", package: "strobe"),
                .product(name: "StrobeResults", package: "strobe"),
                .product(name: "StrobeFormatting", package: "strobe"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Benchmarks of the statistics (`make bench statistics`)

        .executableTarget(
            name: "StrobeToolBenchmarks",
            dependencies: ["StrobeStatistics", "StrobeDiff", .product(name: "StrobeTestSupport", package: "strobe")]
        ),

        // MARK: Fuzzing (`make fuzz`)

        .executableTarget(
            name: "StrobeFuzz",
            dependencies: [
                "StrobeDiff",
                .product(name: "Strobe", package: "strobe"),
                .product(name: "StrobeReader", package: "strobe"),
                .product(name: "StrobeResults", package: "strobe"),
            ]
        ),

        // MARK: Tests

        .testTarget(name: "StrobeStatisticsTests", dependencies: ["StrobeStatistics", "StrobeDiff"]),
        .testTarget(
            name: "StrobeDiffTests",
            dependencies: [
                "StrobeDiff", "StrobeStatistics", "StrobeCLI",
                .product(name: "StrobePerf", package: "strobe"),
                .product(name: "StrobeTestSupport", package: "strobe"),
            ]
        ),
        // Every `strobe` subcommand, run as a user runs it.
        .testTarget(
            name: "StrobeCLITests",
            dependencies: [
                "StrobeCLI",
                .product(name: "Strobe", package: "strobe"),
                .product(name: "StrobeReader", package: "strobe"),
                .product(name: "StrobeResults", package: "strobe"),
                .product(name: "StrobeTestSupport", package: "strobe"),
            ]
        ),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
