// swift-tools-version:6.1
import PackageDescription

/// The built-in source modules, one folder `Plugins/<Name>/` each: a library target of
/// its Swift files with everything in `Snapshots/` compiled in (`PackageResources.<file>_json`;
/// a new recording is picked up by the next build), a target `<Name>Fixture` of its
/// `Fixture/` folder (its fixture route, for the fixture server and tests only), and a
/// test target `<Name>Tests` of its `Tests/` folder. `swift package new-source` adds a line here. The list is explicit
/// because SwiftPM caches a manifest by its text: one that listed `Plugins/` by itself
/// would not see a new folder.
let sourceModules: [SourceModule] = [
    SourceModule("Cabify"),
    SourceModule("Dishwashers"),
    SourceModule("Exec", notBuilt: ["Examples"], libraries: ["ChildProcess"]),
    SourceModule("JSONAPI"),
    SourceModule("LTK", notBuilt: ["Snapshots/generate_pages.py", "Snapshots/real"]),
    SourceModule("Reqres", testFixtures: true),
    SourceModule("TargetDeals", testFixtures: true),
    SourceModule("WebFeed"),
    SourceModule("WebPage", libraries: ["HTMLQuery"]),
]

/// One source module's targets. A source module depends on FeedCore only (and on a
/// library it needs to reach its upstream, such as Subprocess for `exec`).
struct SourceModule {
    let name: String
    /// Files and folders of `Plugins/<Name>/` that are neither code nor snapshots.
    var notBuilt: [String] = []
    var libraries: [Target.Dependency] = []
    /// Whether `Tests/Fixtures/` holds files the tests read.
    var testFixtures = false

    init(_ name: String, notBuilt: [String] = [], libraries: [Target.Dependency] = [], testFixtures: Bool = false) {
        self.name = name
        self.notBuilt = notBuilt
        self.libraries = libraries
        self.testFixtures = testFixtures
    }

    var targets: [Target] {
        [
            .target(
                name: name,
                dependencies: ["FeedCore", "FeedSupport"] + libraries,
                path: "Plugins/\(name)",
                exclude: ["README.md", "Snapshots/README.md", "Tests", "Fixture"] + notBuilt,
                resources: [.embedInCode("Snapshots")]
            ),
            // The source's stand-in upstream for the fixture server and the tests: not linked
            // into `aggregate`.
            .target(
                name: "\(name)Fixture",
                dependencies: [.target(name: name), "FeedCore", "FeedSupport", "FixtureKit"],
                path: "Plugins/\(name)/Fixture"
            ),
            .testTarget(
                name: "\(name)Tests",
                dependencies: [.target(name: name), .target(name: "\(name)Fixture"), "FixtureKit", "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedEngine", "FeedSourceTesting", "aggregate", "fixture-server"],
                path: "Plugins/\(name)/Tests",
                resources: testFixtures ? [.copy("Fixtures")] : []
            ),
        ]
    }
}

let package = Package(
    name: "aggregate",
    products: [
        .executable(name: "aggregate", targets: ["aggregate"]),
        // For packages that build aggregate with sources of their own (Examples/).
        .library(name: "AggregateCommand", targets: ["AggregateCommand"]),
        .library(name: "SourceCatalogue", targets: ["SourceCatalogue"]),
        .library(name: "FeedCore", targets: ["FeedCore"]),
        .library(name: "FeedSupport", targets: ["FeedSupport"]),
        .library(name: "FeedEngine", targets: ["FeedEngine"]),
        .library(name: "FeedConfig", targets: ["FeedConfig"]),
        .library(name: "FeedFormats", targets: ["FeedFormats"]),
        .executable(name: "fixture-server", targets: ["fixture-server"]),
        .plugin(name: "new-source", targets: ["NewSource"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // HMAC for the cache's request identities; postgres-nio builds it already.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // Accounts: bcrypt, sessions, and the Basic and Bearer authenticators of `serve`.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
    ],
    targets: [
        /// Running another program (swift-subprocess): the `exec` source and the `exec` target.
        .target(
            name: "ChildProcess",
            dependencies: [
                "FeedCore", "FeedSupport",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        /// The contract a source module needs: cards, prices, the source protocol, pages and
        /// settings, the transport protocol, typed errors, the config readers. Foundation only.
        .target(name: "FeedCore"),
        /// Helpers sources share: JSON bodies in plain-worded errors (through JSONTape),
        /// lenient lists, redaction, civil dates, cursor trails, stable hashes.
        .target(name: "FeedSupport", dependencies: ["FeedCore", "JSONTape"]),
        /// A fast `Decoder` for upstream JSON with Foundation's semantics (Foundation only).
        .target(name: "JSONTape"),
        /// The output formats: JSON Lines, text, CSV/TSV, Atom, RSS, JSON Feed.
        .target(name: "FeedFormats", dependencies: ["FeedCore", "FeedSupport"]),
        /// Sources.yml: loading, validation with positions, filter rules, edits, OPML.
        .target(name: "FeedConfig", dependencies: ["FeedCore", "FeedSupport", "FeedFormats", "HTMLQuery", .product(name: "Yams", package: "Yams"),
                                                   .product(name: "Crypto", package: "swift-crypto"),
                                                   .product(name: "SystemPackage", package: "swift-system")]),
        /// The state seams (response cache, page memo, first-seen log, leases), their
        /// in-memory implementations, and the request identity the cache keys by.
        .target(
            name: "FeedState",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "SameItem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        /// The state in an SQLite directory (GRDB).
        .target(
            name: "FeedStateSQLite",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedState", "SameItem",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        /// The state in a PostgreSQL database (postgres-nio).
        .target(
            name: "FeedStatePostgres",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedState", "SameItem",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// The engine: the pipeline (fetch, map, filter, merge, page) and the transports.
        .target(
            name: "FeedEngine",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedStateSQLite", "FeedStatePostgres",
                "HTMLQuery", "ArticleExtraction", "SameItem",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ]
        ),
        /// Every HTML we write: swift-mustache templates whose values are escaped by their bytes.
        .target(name: "HTMLTemplates", dependencies: [.product(name: "Mustache", package: "swift-mustache")]),
        .target(
            name: "FeedDigest",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedStateSQLite", "FeedStatePostgres", "FeedEngine",
                "HTMLTemplates", "SameItem",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "SystemPackage", package: "swift-system"),
                // Delivery targets: webhooks over AsyncHTTPClient, programs through ChildProcess.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                "ChildProcess",
            ],
            resources: [.embedInCode("Templates")]
        ),
        /// The one list of built-in sources: the only target that imports source modules.
        /// Also the demo Sources.yml `aggregate init --demo` writes (the repository's own, which
        /// a test keeps equal).
        .target(name: "SourceCatalogue", dependencies: ["FeedCore"] + sourceModules.map { .target(name: $0.name) },
                resources: [.embedInCode("DemoSources.yml")]),
        /// What the fixture server and tests need to play upstreams: the fixture routes'
        /// vocabulary, and the catalogue's sources with their fixture routes.
        .target(name: "FixtureKit", dependencies: ["FeedCore", "FeedSupport"]),
        .target(name: "FixtureCatalogue",
                dependencies: ["FeedCore", "FixtureKit", "SourceCatalogue"] + sourceModules.map { .target(name: "\($0.name)Fixture") }),
        /// The reader's pages: cards, lists and charts rendered through swift-mustache, from
        /// what `serve` hands them; no HTTP.
        .target(
            name: "ReaderPages",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedEngine", "HTMLTemplates",
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.embedInCode("Templates")]
        ),
        /// `serve`'s HTTP that knows no feed: problems, connections and their deadlines,
        /// rendered responses kept as bytes, forms, the access log, metrics.
        .target(
            name: "ServeHTTP",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedEngine",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        /// Who may use `serve`: the client's address, signing in (sessions, Basic, tokens,
        /// a trusted proxy) with its limits, roles, CSRF, the sign-in page.
        .target(
            name: "ServeAccess",
            dependencies: [
                "FeedSupport", "FeedState", "HTMLTemplates", "ServeHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdBasicAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ],
            resources: [.embedInCode("Templates")]
        ),
        /// libxml2, as the machine has it (`libxml2-dev`): its HTML parser and XPath 1.0,
        /// for the pages `plugin: html` reads. Foundation on Linux links the same library.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        /// A web page as a document to query: libxml2's HTML parser (its charset from the
        /// header, the page or UTF-8), CSS selectors translated to XPath 1.0, and queries
        /// bounded in work, so no page or pattern can stall a thread.
        .target(name: "HTMLQuery", dependencies: ["FeedCore", "FeedSupport", "CLibXML2"]),
        /// The article on a page (`full_content:`): a selector's match, or JSON-LD
        /// `articleBody`, `<article>`, `<main>`, the densest block of paragraphs; sanitized.
        .target(name: "ArticleExtraction", dependencies: ["FeedCore", "FeedSupport", "HTMLQuery"]),
        /// One item across sources (`merge: same-item`): canonical links, GTINs, titles;
        /// which cards are one item, and the card that shows it.
        .target(name: "SameItem", dependencies: ["FeedCore", "FeedSupport"]),
        /// The Google Reader API's vocabulary: streams, item ids in both forms, and the JSON
        /// shapes apps read; no HTTP.
        .target(
            name: "GoogleReaderModel",
            dependencies: ["FeedCore", "FeedConfig", "FeedFormats", "FeedState", "ReaderPages"]
        ),
        /// The Fever API's vocabulary: integer ids for the subscriptions and folders of the
        /// Google Reader API's catalog, and the JSON members its apps read; no HTTP.
        .target(
            name: "FeverModel",
            dependencies: ["FeedCore", "FeedSupport", "FeedFormats", "FeedState", "ReaderPages", "GoogleReaderModel"]
        ),
        /// `aggregate serve`: the feeds over HTTP (Hummingbird), gzip through compress-nio.
        .target(
            name: "FeedServer",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedEngine", "HTMLTemplates", "ReaderPages",
                "ServeHTTP", "ServeAccess", "GoogleReaderModel", "FeverModel", "SameItem",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // SIGHUP reloads Sources.yml.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
                // /metrics: counters and histograms through swift-metrics, the text format by swift-prometheus.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // The reader's form tokens: an HMAC of the session id.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdBasicAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ]
        ),
        /// The command line as a library: `Aggregate.main(sources:)` runs it with any list of
        /// plugins, so a package of its own can build "aggregate plus my sources" (Examples/).
        .target(
            name: "AggregateCommand",
            dependencies: [
                "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedEngine", "FeedDigest", "FeedServer", "ServeHTTP", "ServeAccess", "SameItem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// `aggregate`: the command with the built-in catalogue.
        .executableTarget(name: "aggregate", dependencies: ["AggregateCommand", "SourceCatalogue"]),
        .target(
            name: "FixtureServer",
            dependencies: [
                "FeedCore", "FeedSupport", "FixtureKit",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        .executableTarget(
            name: "fixture-server",
            dependencies: [
                "FixtureServer", "FeedCore", "FixtureKit", "FixtureCatalogue",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        /// `swift package --allow-writing-to-package-directory new-source Name`.
        .plugin(
            name: "NewSource",
            capability: .command(
                intent: .custom(verb: "new-source", description: "Create Plugins/<Name>/: a working source module skeleton"),
                permissions: [.writeToPackageDirectory(reason: "Creates Plugins/<Name>/ and registers it in the catalogue and Sources.yml")]
            ),
            path: "Tools/NewSource"
        ),
        /// The test kit every source's tests use: recorded transports, the built binaries,
        /// the fixture world, and the conformance suite.
        .target(
            name: "FeedSourceTesting",
            dependencies: ["FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedEngine", "FixtureKit", "FixtureServer",
                           "SourceCatalogue",
                           "FixtureCatalogue",
                           // TestProcess: the programs the tests run.
                           .product(name: "Subprocess", package: "swift-subprocess"),
                           .product(name: "SystemPackage", package: "swift-system")],
            path: "Tests/FeedSourceTesting"
        ),
        .testTarget(name: "FeedCoreTests", dependencies: ["FeedCore", "FeedSupport", "JSONTape", "SourceCatalogue", "FixtureKit", "FixtureCatalogue"]),
        .testTarget(name: "FeedEngineTests", dependencies: ["FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedStateSQLite", "FeedStatePostgres", "FeedEngine", .product(name: "Logging", package: "swift-log"), "Yams"]),
        /// The state seams' contract tests (cache, page memo, card store, reading marks,
        /// search index, accounts) on memory, SQLite and PostgreSQL, and their migrations.
        .testTarget(name: "HTMLQueryTests", dependencies: ["HTMLQuery", "ArticleExtraction"]),
        .testTarget(name: "SameItemTests", dependencies: ["SameItem", "FeedCore", "FeedSupport", "FeedFormats"], resources: [.embedInCode("Fixtures/pairs.jsonl")]),
        .testTarget(name: "FeedStateTests", dependencies: ["FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedStateSQLite",
                                                             "FeedStatePostgres", "FeedEngine", "FeedSourceTesting",
                                                             .product(name: "GRDB", package: "GRDB.swift"),
                                                             .product(name: "PostgresNIO", package: "postgres-nio")]),
        .testTarget(name: "FeedDigestTests", dependencies: ["FeedCore", "FeedSupport", "FeedConfig", "FeedState", "FeedStateSQLite", "FeedStatePostgres", "FeedEngine", "FeedDigest", "FeedSourceTesting",
                                                              .product(name: "GRDB", package: "GRDB.swift"),
                                                              .product(name: "PostgresNIO", package: "postgres-nio")]),
        /// `serve` in process (HummingbirdTesting) against the fixture server.
        .testTarget(name: "FeedServerTests", dependencies: ["FeedServer", "ServeHTTP", "ServeAccess", "ReaderPages", "GoogleReaderModel", "FeverModel", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedEngine", "HTMLTemplates",
                                                              "FeedSourceTesting", "SourceCatalogue", "FixtureKit", "FixtureServer",
                                                              .product(name: "Hummingbird", package: "hummingbird"),
                                                              .product(name: "HummingbirdTesting", package: "hummingbird"),
                                                              .product(name: "GRDB", package: "GRDB.swift"),
                                                              .product(name: "Mustache", package: "swift-mustache"),
                                                              .product(name: "NIOCore", package: "swift-nio"),
                                                              .product(name: "HTTPTypes", package: "swift-http-types")]),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["FeedSourceTesting", "SourceCatalogue", "FixtureKit", "FixtureCatalogue", "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats",
                           "FeedEngine", "aggregate", "fixture-server"]
        ),
        /// Runs `new-source` in a copy of the package and builds it (XCTest: runs apart).
        .testTarget(name: "ScaffoldTests", dependencies: ["FeedSourceTesting"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["aggregate", "fixture-server", "FixtureServer", "FeedCore", "FeedSupport", "FeedConfig", "FeedFormats", "FeedState", "FeedEngine",
                           "FeedSourceTesting", "SourceCatalogue", "FixtureKit", "FixtureCatalogue",
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "NIOPosix", package: "swift-nio")]
        ),
    ] + sourceModules.flatMap(\.targets),
    swiftLanguageModes: [.v6]
)
