// swift-tools-version:6.1

import PackageDescription

// An app's perf suite as a new user writes it: it pins the older major of a
// package that Strobe's own tools also use (Yams 5; the tools build with 6
// too), and depends on the SDK and the runner. `make test-adoption` resolves,
// builds and runs it, and checks that its resolution holds only Yams and
// Strobe.
let package = Package(
    name: "AdoptingApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "strobe", path: "../../.."),
        .package(url: "https://github.com/jpsim/Yams", exact: "5.0.1"),
    ],
    targets: [
        .executableTarget(
            name: "YAMLPerfTests",
            dependencies: [
                .product(name: "Strobe", package: "strobe"),
                .product(name: "StrobePerf", package: "strobe"),
                .product(name: "Yams", package: "Yams"),
            ]
        )
    ]
)
