// swift-tools-version:6.1
import PackageDescription

/// aggregate with one more source, built without forking it: this package depends on
/// aggregate (here by path; from a clone, by its git URL), adds the `Quotes` source
/// module, and runs the command with the built-in catalogue plus that source.
let package = Package(
    name: "QuotesAggregate",
    dependencies: [
        .package(name: "aggregate", path: "../.."),
    ],
    targets: [
        /// A source module: FeedCore (and its helpers, FeedSupport) only, its recorded
        /// responses compiled in.
        .target(
            name: "Quotes",
            dependencies: [.product(name: "FeedCore", package: "aggregate"), .product(name: "FeedSupport", package: "aggregate")],
            exclude: ["Snapshots/README.md"],
            resources: [.embedInCode("Snapshots")]
        ),
        /// `my-aggregate`: every built-in source, plus `plugin: quotes`.
        .executableTarget(
            name: "my-aggregate",
            dependencies: [
                "Quotes",
                .product(name: "AggregateCommand", package: "aggregate"),
                .product(name: "SourceCatalogue", package: "aggregate"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
