// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// A seed workflow as a small executable under `Examples/`.
func example(_ name: String, also: [Target.Dependency] = [], exclude: [String] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["Strata", "ExampleSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")] + also,
        path: "Examples/\(name)",
        exclude: exclude
    )
}

/// Whether only the core libraries are built: `Strata` and
/// `StrataDocuments` with their in-process tests, and no other package.
/// `.ci/sanitize` sets STRATA_CORE_ONLY for AddressSanitizer's run: nearly
/// all of Strata's unsafe pointer code is in those two libraries, and the
/// run skips building SwiftNIO and Hummingbird again.
let coreOnly = Context.environment["STRATA_CORE_ONLY"] != nil

/// Whether the `@Record` macro is built. `.ci/sanitize` sets
/// STRATA_WITHOUT_MACROS: the sanitizer builds leave out the compiler plugin
/// and swift-syntax (code that runs inside the compiler, not in an app);
/// `GeneratedRecordTests` covers the core paths the macro's code calls.
let withMacros = Context.environment["STRATA_WITHOUT_MACROS"] == nil && !coreOnly

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataDocuments", targets: ["StrataDocuments"]),
    ] + (coreOnly ? [] : [
        .library(name: "StrataServer", targets: ["StrataServer"]),
        .library(name: "StrataSync", targets: ["StrataSync"]),
        .library(name: "StrataQueryServers", targets: ["StrataQueryServers"]),
        .executable(name: "strata", targets: ["StrataCLI"]),
        .executable(name: "ipgeo", targets: ["ipgeo"]),
        .executable(name: "activity", targets: ["activity"]),
        .executable(name: "stock", targets: ["stock"]),
        .executable(name: "notes", targets: ["notes"]),
        .executable(name: "movies", targets: ["movies"]),
        .executable(name: "books", targets: ["books"]),
        .executable(name: "voting", targets: ["voting"]),
    ]) + (withMacros ? [
        // `@Record`: opt-in, so that `Strata` alone builds without swift-syntax.
        .library(name: "StrataMacros", targets: ["StrataMacros"]),
    ] : []),
    dependencies: coreOnly ? [] : [
        // Only the command-line tool uses it; the library depends on SQLite alone.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Only the server target (and the tool that starts it) uses it.
        // Without its default ConfigurationSupport trait (swift-configuration
        // and swift-system, which Strata does not use, are not built).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: ["FullFoundation"]),
        // The server's gzip request bodies (ibmcloudant sends them); zlib underneath.
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        // Already in the server's graph; the documents tests gzip bodies with it.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        // Already in the server's graph (Hummingbird runs on it): the server
        // stops gracefully when its task is cancelled.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ] + (withMacros ? [
        // Only the `@Record` macro's compiler plugin (the StrataMacros
        // product) uses it.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"604.0.0"),
        // Snapshot tests of the macro's expansions.
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
    ] : []),
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
        // CouchDB's document model on SQLite: depends on Strata only, so an
        // app can embed it.
        .target(name: "StrataDocuments", dependencies: ["Strata"]),
        // Helpers the test targets use, written once.
        .target(name: "StrataTestHelpers", dependencies: ["Strata"], path: "Tests/StrataTestHelpers"),
        // The fast suite: the library through its API, in process.
        .testTarget(
            name: "StrataTests",
            dependencies: ["Strata", "StrataTestHelpers"],
            resources: [.copy("Resources")]
        ),
        // The document engine through its API, in process: no server.
        .testTarget(
            name: "StrataDocumentsTests",
            dependencies: ["Strata", "StrataDocuments", "StrataTestHelpers"]
        ),
    ] + (coreOnly ? [] : [
        // Duktape, the ES5 engine design-document functions run in, opened at
        // run time (dlopen): building needs no Duktape header, and a machine
        // without the library serves everything but JavaScript.
        .target(
            name: "CDuktape",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        // The query server (`strata query-server`): CouchDB's query-server
        // protocol over Duktape, in a process of its own.
        .target(name: "StrataJavaScript", dependencies: ["CDuktape"]),
        // The pool of query-server processes that runs design documents'
        // JavaScript for a DocumentDatabase: apart from the server, since it
        // starts processes (iOS has no Foundation.Process).
        .target(name: "StrataQueryServers", dependencies: ["Strata", "StrataDocuments"]),
        // SHA-1, SHA-256 and PBKDF2 for the server's passwords, in plain C:
        // a crypto library would compile a copy of BoringSSL into every build.
        .target(name: "CStrataDigest"),
        // CouchDB's HTTP API over a folder of document databases.
        .target(
            name: "StrataServer",
            dependencies: [
                "Strata",
                "StrataDocuments",
                "StrataQueryServers",
                "StrataSync",
                .product(name: "Hummingbird", package: "hummingbird"),
                "CStrataDigest",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The /_utils page: plain HTML, CSS and JavaScript, no build step.
            resources: [.copy("Utils")]
        ),
        // A client for CouchDB-protocol servers and the replicator, over
        // Foundation's URLSession: depends on the documents store only.
        .target(name: "StrataSync", dependencies: ["Strata", "StrataDocuments"]),
        .executableTarget(
            name: "StrataCLI",
            dependencies: [
                "Strata",
                "StrataServer",
                "StrataSync",
                "StrataJavaScript",
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
        example("notes", also: ["StrataDocuments", "StrataSync"], exclude: ["sync-flow"]),
        example("movies"),
        // Its favorites sync between devices (`books sync`; the flow script
        // runs them through `strata serve`).
        example("books", also: ["StrataDocuments", "StrataSync"], exclude: ["sync-flow"]),
        // The seed's voting device: a client of `strata serve` (or CouchDB)
        // that also votes offline into a local store.
        .executableTarget(
            name: "voting",
            dependencies: ["StrataDocuments", "StrataSync", "ExampleSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/voting",
            exclude: ["flow"]
        ),
        // A helper the end-to-end tests run as a second process.
        .executableTarget(name: "PoolWriter", dependencies: ["Strata"], path: "Tests/Helpers/PoolWriter"),
        // A `strata serve` on loopback for a test, and the transcripts
        // recorded against a real CouchDB: shared by the server's and the
        // replicator's tests.
        .target(
            name: "StrataServerTestHelpers",
            dependencies: ["StrataDocuments", "StrataServer", "StrataSync", "StrataTestHelpers"],
            path: "Tests/StrataServerTestHelpers",
            resources: [.copy("Resources")]
        ),
        // CouchDB's HTTP API (`strata serve`) over real HTTP on loopback.
        .testTarget(
            name: "StrataServerTests",
            dependencies: [
                "Strata", "StrataDocuments", "StrataServer", "StrataServerTestHelpers", "StrataTestHelpers",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The client and the replicator, against `strata serve` and a fake
        // peer that answers as the recorded CouchDB and PouchDB did.
        .testTarget(
            name: "StrataSyncTests",
            dependencies: [
                "StrataDocuments", "StrataServer", "StrataServerTestHelpers", "StrataSync", "StrataTestHelpers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Tests that launch processes: the `strata` tool, the examples, a
        // second writer, the Swift compiler on the documentation.
        .testTarget(
            name: "StrataEndToEndTests",
            dependencies: ["Strata", "StrataTestHelpers"],
            resources: [.copy("Resources")]
        ),
    ]) + (withMacros ? macroTargets : []),
    swiftLanguageModes: [.v6]
)

/// `@Record` (the StrataMacros product) and its tests.
var macroTargets: [Target] {
    [
        // The macro's implementation: a compiler plugin, run by the compiler,
        // never linked into an app.
        .macro(
            name: "StrataMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // The macros' declarations, for apps: `import StrataMacros`.
        .target(name: "StrataMacros", dependencies: ["Strata", "StrataMacrosPlugin"]),
        // Its expansions as snapshots, and records that use it against real
        // SQLite.
        .testTarget(
            name: "StrataMacrosTests",
            dependencies: [
                "Strata", "StrataMacros", "StrataMacrosPlugin", "StrataTestHelpers",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
    ]
}
