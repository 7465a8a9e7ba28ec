import Dishwashers
import FeedCore
import FixtureKit
import Foundation

/// The static dishwasher catalogue: `GET /dishwasher/api/<file>.json` serves the recorded
/// grids and product page; `GET /dishwasher/images/<name>` answers the image names the
/// recordings reference with a placeholder JPEG (the real files were not recorded),
/// and the names missing upstream with 404.
public struct DishwasherFixture: FixtureUpstream {
    public let name = "dishwasher"
    let files: [String: Data]
    let images: Set<String>

    /// Names the upstream's images folder does not have, though the grids reference them.
    public static let missingImages: Set<String> = [
        "236970690.jpeg", "237756457.jpeg", "237563805.jpeg", "236920214.jpeg", "237110664.jpeg", "236888507.jpeg",
        "237173637.jpeg?",
    ]

    /// The smallest well-formed JPEG (1×1 pixel), standing in for the unrecorded images.
    static let placeholderJPEG = Data(base64Encoded:
        "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=") ?? Data()

    /// `files` by file name (`search-valid-response.json`).
    public init(files: [String: Data]) {
        self.files = files
        var names = Set<String>()
        for body in files.values {
            guard let json = try? JSONDecoder().decode(JSONValue.self, from: body) else { continue }
            if case .array(let products)? = json["products"] {
                names.formUnion(products.compactMap { $0["image"]?.stringValue })
            }
            if case .array(let urls)? = json["media"]?["images"]?["urls"] {
                names.formUnion(urls.compactMap(\.stringValue))
            }
        }
        images = names.subtracting(Self.missingImages)
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        if request.path.hasPrefix("/api/") {
            return files[String(request.path.dropFirst("/api/".count))].map { .json($0) } ?? .notFound
        }
        guard request.path.hasPrefix("/images/") else { return nil }
        let name = String(request.path.dropFirst("/images/".count)).removingPercentEncoding ?? ""
        guard images.contains(name) else { return .notFound }
        return FixtureResponse(contentType: "image/jpeg", body: Self.placeholderJPEG)
    }
}

extension DishwashersSource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        recordedFixture
    }

    /// Made once a process: every fixture server of a test run serves the same recordings,
    /// and reading them again for each (hundreds of tests) kept the test process's threads busy.
    static let recordedFixture = DishwasherFixture(files: Dictionary(uniqueKeysWithValues: snapshots.map {
        (String($0.url.split(separator: "/").last ?? ""), $0.body)
    }))

    public static let fixtureSources = [
        FixtureSourceEntry(id: "dishwashers", plugin: plugin, path: "/dishwasher/api/search-valid-response.json",
                           route: "dishwasher", extraYAML: """
                               options:
                                 detail_url: {base}/dishwasher/api/product-search-response.json
                                 image_base: {base}/dishwasher/images/

                           """),
    ]
}
