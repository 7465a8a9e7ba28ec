import Cabify
import FeedCore
import FixtureKit
import Foundation

/// The Cabify shop: `GET /cabify/Products.json` serves the recorded products.
public struct CabifyFixture: FixtureUpstream {
    public let name = "cabify"
    let products: Data

    public init(products: Data) {
        self.products = products
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        request.path == "/Products.json" ? .json(products) : nil
    }
}

extension CabifySource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        CabifyFixture(products: snapshots[0].body)
    }

    public static let fixtureSources = [
        FixtureSourceEntry(id: "cabify", plugin: plugin, path: "/cabify/Products.json", route: "cabify"),
    ]
}
