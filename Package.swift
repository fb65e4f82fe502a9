// swift-tools-version: 6.1
import PackageDescription

/// A seed workflow as a small executable under `Examples/`.
func example(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["Strata", "ExampleSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
        path: "Examples/\(name)"
    )
}

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["StrataCLI"]),
        .executable(name: "ipgeo", targets: ["ipgeo"]),
        .executable(name: "activity", targets: ["activity"]),
        .executable(name: "stock", targets: ["stock"]),
        .executable(name: "notes", targets: ["notes"]),
        .executable(name: "movies", targets: ["movies"]),
        .executable(name: "books", targets: ["books"]),
    ],
    dependencies: [
        // Only the command-line tool uses it; the library depends on SQLite alone.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        // Chooses the SDK's SQLite3 or CSQLite, in one file, for Strata's own
        // sources; Strata does not re-export the C API.
        .target(
            name: "StrataSQLite",
            dependencies: [
                .target(name: "CSQLite", condition: .when(platforms: [.linux, .windows, .android, .openbsd, .wasi])),
            ]
        ),
        .target(name: "Strata", dependencies: ["StrataSQLite"]),
        .executableTarget(
            name: "StrataCLI",
            dependencies: [
                "Strata",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "ExampleSupport",
            dependencies: ["Strata", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/ExampleSupport"
        ),
        example("ipgeo"),
        example("activity"),
        example("stock"),
        example("notes"),
        example("movies"),
        example("books"),
        // A helper the end-to-end tests run as a second process.
        .executableTarget(name: "PoolWriter", dependencies: ["Strata"], path: "Tests/Helpers/PoolWriter"),
        // Helpers both test targets use, written once.
        .target(name: "StrataTestHelpers", dependencies: ["Strata"], path: "Tests/StrataTestHelpers"),
        // The fast suite: the library through its API, in process.
        .testTarget(
            name: "StrataTests",
            dependencies: ["Strata", "StrataTestHelpers"],
            resources: [.copy("Resources")]
        ),
        // Tests that launch processes: the `strata` tool, the examples, a
        // second writer, the Swift compiler on the documentation.
        .testTarget(
            name: "StrataEndToEndTests",
            dependencies: ["Strata", "StrataTestHelpers"],
            resources: [.copy("Resources")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
