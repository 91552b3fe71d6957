// swift-tools-version:6.1

import PackageDescription

// A small perf suite of CPU-bound loops, for scripts/nightly-history.sh: a
// history of nightly runs of a build and of a pinned reference build. With
// NIGHTLY_LONGER_LOOPS=1, two of its tests run 10% more iterations of their
// loops: the code change the history must find. A package of its own, so
// that the core package's build is left as it is.
let package = Package(
    name: "NightlySuite",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "strobe", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "NightlyPerf",
            dependencies: [.product(name: "StrobePerf", package: "strobe")]
        )
    ]
)
