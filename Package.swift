// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM caches this manifest by its text, so it sees a new source folder or snapshot only
// once this file changes: `swift package new-source` and `aggregate record` rewrite this line.
// Source folders: Cabify(1) Dishwashers(3) Exec(2) JSONAPI(1) LTK(4) Reqres(4) TargetDeals(2)

/// Every built-in source module is a folder `Plugins/<Name>/`, found here by itself:
/// a library target of its Swift files, with every top-level `Snapshots/*.json` compiled
/// in (`PackageResources.<file>_json`), and a test target `<Name>Tests` of its `Tests/`
/// folder (with `Tests/Fixtures/` as resources when present). Nothing here names a source:
/// adding one is its folder plus its line in Sources/SourceCatalogue (see README,
/// "Adding a source").
struct SourceFolder {
    let name: String
    let snapshots: [String]
    let notBuilt: [String]
    let otherFolders: [String]
    let hasTests: Bool
    let hasTestFixtures: Bool

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    static func all() -> [SourceFolder] {
        let files = FileManager.default
        let plugins = root.appendingPathComponent("Plugins")
        let names = (try? files.contentsOfDirectory(atPath: plugins.path)) ?? []
        return names.sorted().compactMap { name in
            let folder = plugins.appendingPathComponent(name)
            let entries = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
            guard entries.contains(where: { $0.hasSuffix(".swift") }) else { return nil }
            let snapshotEntries = ((try? files.contentsOfDirectory(atPath: folder.appendingPathComponent("Snapshots").path)) ?? []).sorted()
            let isSnapshot = { (entry: String) in
                entry.hasSuffix(".json") && !isDirectory(folder.appendingPathComponent("Snapshots/\(entry)"))
            }
            // Folders of other files (Examples/) are not built.
            let otherFolders = entries.filter { entry in
                !["Snapshots", "Tests"].contains(entry) && isDirectory(folder.appendingPathComponent(entry))
                    && !((try? files.contentsOfDirectory(atPath: folder.appendingPathComponent(entry).path)) ?? [])
                        .contains { $0.hasSuffix(".swift") }
            }
            return SourceFolder(
                name: name,
                snapshots: snapshotEntries.filter(isSnapshot),
                notBuilt: snapshotEntries.filter { !isSnapshot($0) },
                otherFolders: otherFolders,
                hasTests: entries.contains("Tests"),
                hasTestFixtures: files.fileExists(atPath: folder.appendingPathComponent("Tests/Fixtures").path))
        }
    }

    static func isDirectory(_ url: URL) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &directory) && directory.boolValue
    }

    var targets: [Target] {
        var targets: [Target] = [
            .target(
                name: name,
                dependencies: ["FeedCore"],
                path: "Plugins/\(name)",
                exclude: notBuilt.map { "Snapshots/\($0)" } + otherFolders + (hasTests ? ["Tests"] : []),
                resources: snapshots.map { .embedInCode("Snapshots/\($0)") }
            ),
        ]
        if hasTests {
            targets.append(.testTarget(
                name: "\(name)Tests",
                dependencies: [.target(name: name), "FeedCore", "FeedEngine", "FeedSourceTesting", "aggregate", "fixture-server"],
                path: "Plugins/\(name)/Tests",
                resources: hasTestFixtures ? [.copy("Fixtures")] : []
            ))
        }
        return targets
    }
}

let sourceFolders = SourceFolder.all()

let package = Package(
    name: "aggregate",
    products: [
        .executable(name: "aggregate", targets: ["aggregate"]),
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
    ],
    targets: [
        /// The vocabulary every module shares: cards, prices, the source protocol, errors.
        .target(name: "FeedCore", dependencies: ["JSONTape"]),
        /// A fast `Decoder` for upstream JSON with Foundation's semantics (Foundation only).
        .target(name: "JSONTape"),
        .target(
            name: "FeedEngine",
            dependencies: [
                "FeedCore",
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "FeedDigest",
            dependencies: [
                "FeedCore", "FeedEngine",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        /// The one list of built-in sources: the only target that imports source modules.
        .target(name: "SourceCatalogue", dependencies: ["FeedCore"] + sourceFolders.map { .target(name: $0.name) }),
        /// `aggregate serve`: the feeds over HTTP (Hummingbird), gzip through compress-nio.
        .target(
            name: "FeedServer",
            dependencies: [
                "FeedCore", "FeedEngine",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "aggregate",
            dependencies: [
                "FeedCore", "FeedEngine", "FeedDigest", "FeedServer", "SourceCatalogue",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
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
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        .executableTarget(
            name: "fixture-server",
            dependencies: [
                "FixtureServer", "FeedCore", "SourceCatalogue",
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
            dependencies: ["FeedCore", "FeedEngine", "FixtureServer", "SourceCatalogue"],
            path: "Tests/FeedSourceTesting"
        ),
        .testTarget(name: "FeedCoreTests", dependencies: ["FeedCore", "JSONTape", "SourceCatalogue"]),
        .testTarget(name: "FeedEngineTests", dependencies: ["FeedCore", "FeedEngine", .product(name: "Logging", package: "swift-log"), "Yams"]),
        .testTarget(name: "FeedDigestTests", dependencies: ["FeedCore", "FeedEngine", "FeedDigest", "FeedSourceTesting"]),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["FeedSourceTesting", "SourceCatalogue", "FeedCore", "aggregate", "fixture-server"]
        ),
        /// Runs `new-source` in a copy of the package and builds it (XCTest: runs apart).
        .testTarget(name: "ScaffoldTests", dependencies: ["FeedSourceTesting"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["aggregate", "fixture-server", "FixtureServer", "FeedCore", "FeedSourceTesting", "SourceCatalogue",
                           .product(name: "AsyncHTTPClient", package: "async-http-client")]
        ),
    ] + sourceFolders.flatMap(\.targets),
    swiftLanguageModes: [.v6]
)
