// swift-tools-version:6.1

import PackageDescription

// What the tests of both packages share, as a package of its own that the
// tools package depends on by path: the SDK package (the repository root)
// compiles the same folders as targets that no product names, since a
// package an app depends on can have no local dependency. It depends on
// nothing, so neither package's tests form a cycle through it.
let package = Package(
    name: "strobe-test-support",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrobeTestSupport", targets: ["StrobeTestSupport"]),
        .library(name: "StrobeTestTraits", targets: ["StrobeTestTraits"]),
    ],
    targets: [
        // The official-decoder bridge, a program runner and the figure
        // printer.
        .target(name: "StrobeTestSupport"),
        // The `.processWide` suite trait; it links swift-testing.
        .target(name: "StrobeTestTraits"),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
