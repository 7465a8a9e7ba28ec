// swift-tools-version:6.1
import PackageDescription

/// Every built-in source module: one library target under Plugins/<Name>/ with its
/// recorded snapshots compiled in, and a test target Tests/<Name>Tests.
/// Adding a source = a folder, one line here, one line in
/// Sources/aggregate/BuiltinSources.swift, one entry in Sources.yml.
let plugins: [(name: String, snapshots: [String], testFixtures: Bool, notBuilt: [String])] = [
    ("TargetDeals", ["deals_list.json", "deal_1.json"], true, []),
    ("LTK", ["page1.json", "page2.json", "page3.json", "page4.json"], false, ["generate_pages.py", "real"]),
    ("Reqres", ["users_page1.json", "users_page2.json", "user_2.json", "user_23_404.json"], true, []),
    ("Dishwashers", ["search-valid-response.json", "search-valid-response-complex-price.json",
                     "product-search-response.json"], false, []),
    ("Cabify", ["products.json"], false, []),
]
let sourceModules = plugins.map(\.name)

let package = Package(
    name: "aggregate",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "aggregate", targets: ["aggregate"]),
        .executable(name: "fixture-server", targets: ["fixture-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        .target(name: "FeedCore"),
        .target(
            name: "FeedEngine",
            dependencies: [
                "FeedCore",
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "FeedDigest",
            dependencies: [
                "FeedCore", "FeedEngine",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        .executableTarget(
            name: "aggregate",
            dependencies: [
                "FeedCore", "FeedEngine", "FeedDigest",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ] + sourceModules.map { .target(name: $0) }
        ),
        .target(
            name: "FixtureServer",
            dependencies: [
                "FeedCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ] + sourceModules.map { .target(name: $0) }
        ),
        .executableTarget(
            name: "fixture-server",
            dependencies: [
                "FixtureServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "FeedCoreTests", dependencies: ["FeedCore"]),
        .testTarget(name: "FeedEngineTests", dependencies: ["FeedCore", "FeedEngine"]),
        .target(name: "SourceTestSupport", dependencies: ["FeedCore"], path: "Tests/SourceTestSupport"),
        .testTarget(name: "FeedDigestTests", dependencies: ["FeedCore", "FeedEngine", "FeedDigest"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["aggregate", "fixture-server", "FixtureServer", "FeedCore"]
        ),
    ] + plugins.flatMap { plugin -> [Target] in
        [
            .target(
                name: plugin.name,
                dependencies: ["FeedCore"],
                path: "Plugins/\(plugin.name)",
                exclude: (["README.md"] + plugin.notBuilt).map { "Snapshots/\($0)" },
                resources: plugin.snapshots.map { .embedInCode("Snapshots/\($0)") }
            ),
            .testTarget(
                name: "\(plugin.name)Tests",
                dependencies: [.target(name: plugin.name), "FeedCore", "FeedEngine", "SourceTestSupport"],
                resources: plugin.testFixtures ? [.copy("Fixtures")] : []
            ),
        ]
    },
    swiftLanguageModes: [.v6]
)
