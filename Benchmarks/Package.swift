// swift-tools-version: 6.1
// Benchmarks live in their own package so the library keeps no dependency
// beyond SQLite. Run them with `Benchmarks/run` (see Benchmarks/README.md).
import PackageDescription

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataMacros", package: "Strata"),
                .product(name: "StrataDocuments", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
