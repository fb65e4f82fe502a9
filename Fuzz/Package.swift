// swift-tools-version: 6.1
// libFuzzer targets for Strata's parsers, in their own package so the
// library and its tests build without the fuzzer runtime. Run them with
// `Fuzz/run` (see Fuzz/README.md).
import PackageDescription

let fuzzTargets = ["FuzzCSV", "FuzzTSV", "FuzzJSON", "FuzzNDJSON", "FuzzSQLText"]

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "Strata", package: "Strata")]),
    ] + fuzzTargets.map { name in
        .executableTarget(name: name, dependencies: ["FuzzSupport", .product(name: "Strata", package: "Strata")])
    },
    swiftLanguageModes: [.v6]
)
