// swift-tools-version:6.2

import PackageDescription

// A Hummingbird server and an AsyncHTTPClient client, both instrumented with
// swift-distributed-tracing, recording into one Strobe trace through
// StrobeTracing. A package of its own, so that its dependencies stay out of
// the core package's build.
let package = Package(
    name: "ServerTracing",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "strobe", path: "../..", traits: ["StrobeTracing"]),
        // Hummingbird's traits as the tools package sets them, so a build in its
        // build directory reuses Hummingbird compiled there.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(
            name: "ServerTracing",
            dependencies: [
                .product(name: "Strobe", package: "strobe"),
                .product(name: "StrobeReader", package: "strobe"),
                .product(name: "StrobeTracing", package: "strobe"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        )
    ]
)
