// swift-tools-version:6.2

import PackageDescription

// Times a span through StrobeTracer beside swift-otel's SDK tracer and the
// no-op tracer, in one process. A package of its own, so that neither the
// SDK package nor the tools package resolves swift-otel and its dependencies.
let package = Package(
    name: "SpanComparison",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "strobe", path: "../..", traits: ["StrobeTracing"]),
        .package(name: "strobe-test-support", path: "../../Tests/Support"),
        // The comparison drops spans at swift-otel's "none" exporter, so it
        // builds only the OTLP/HTTP exporter's trait, not OTLP/gRPC's: 1.6.0
        // built with neither trait does not compile (it calls Foundation's
        // `trimmingCharacters(in:)` with no Foundation import of its own).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "SpanComparison",
            dependencies: [
                .product(name: "Strobe", package: "strobe"),
                .product(name: "StrobeTracing", package: "strobe"),
                .product(name: "StrobeProcessRunner", package: "strobe"),
                .product(name: "StrobeResults", package: "strobe"),
                .product(name: "StrobeTestSupport", package: "strobe-test-support"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    ]
)
