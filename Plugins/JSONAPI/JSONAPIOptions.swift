import FeedCore
import Foundation

/// The `options:` of a `plugin: json` source, validated: every problem is reported at its
/// line and column, all at once.
struct JSONAPIOptions: Sendable {
    var items: JSONPath
    var kind: Card.Kind
    var currency: String?
    /// Prices are whole minor units (cents): 22999 → 229.99.
    var minorUnits: Bool
    var fields: Fields
    var paging: JSONAPIPaging
    var detail: Detail?

    struct Fields: Sendable {
        var id: FieldTemplate
        var title: FieldTemplate
        var summary, price, regularPrice, image, url, author, authorImage, published, tags: FieldTemplate?
        /// `extra: {name: path}`: copied into the card's `details`.
        var extra: [(name: String, path: JSONPath)]
    }

    struct Detail: Sendable {
        var url: FieldTemplate
        var item: JSONPath
    }

    static let keys = ["items", "kind", "currency", "minor_units", "fields", "paging", "detail"]
    static let fieldKeys = ["id", "title", "summary", "price", "regular_price", "image", "url", "author",
                            "author_image", "published", "tags", "extra"]

    /// Reads the options; throws ``ConfigIssues`` naming every problem.
    init(_ settings: SourceSettings) throws {
        let options = settings.optionsReader()
        let items = options.node("items") == nil
            ? { options.report("items", "is required: the path of the list of records in a page body (\".\" when the body is the list)"); return nil }()
            : Self.path(options, "items")
        kind = options.choice("kind", from: Card.Kind.allCases.map(\.rawValue)).flatMap(Card.Kind.init(rawValue:)) ?? .item
        currency = options.node("currency") == nil ? nil : options.currency("currency", default: "")
        minorUnits = options.boolean("minor_units") ?? false
        let fields = Self.fields(options)
        if currency == nil, case .map(let entries)? = options.node("fields")?.value,
           entries.contains(where: { ["price", "regular_price"].contains($0.key) }) {
            options.report("currency", "is required with fields.price: the ISO 4217 code of every price (USD, EUR)")
        }
        paging = JSONAPIPaging.read(options.map("paging"))
        detail = options.map("detail").flatMap(Self.detail)
        try options.finish(allowedKeys: Self.keys)
        guard let items, let fields else { throw ConfigIssues(options.issues.issues) }
        self.items = items
        self.fields = fields
    }

    static func path(_ map: ConfigMapReader, _ key: String) -> JSONPath? {
        guard let text = map.string(key) else { return nil }
        return JSONPath(text) ?? {
            map.report(key, "\"\(text)\" is not a path: use dotted keys with [n] indexes (data.items, [0].id), or \".\" for the body")
            return nil
        }()
    }

    static func template(_ map: ConfigMapReader, _ key: String, required: Bool = false) -> FieldTemplate? {
        guard let text = map.string(key, required: required) else { return nil }
        switch FieldTemplate.parse(text) {
        case .success(let template): return template
        case .failure(let problem):
            map.report(key, problem.message)
            return nil
        }
    }

    static func fields(_ options: ConfigMapReader) -> Fields? {
        guard let map = options.map("fields") else {
            options.report("fields", "is required: at least fields.id and fields.title (paths in a record)")
            return nil
        }
        let id = template(map, "id", required: true)
        let title = template(map, "title", required: true)
        var extra: [(String, JSONPath)] = []
        if let extras = map.map("extra") {
            for entry in extras.entries {
                if let path = Self.path(extras, entry.key) { extra.append((entry.key, path)) }
            }
        }
        let summary = template(map, "summary"), price = template(map, "price")
        let regularPrice = template(map, "regular_price"), image = template(map, "image"), url = template(map, "url")
        let author = template(map, "author"), authorImage = template(map, "author_image")
        let published = template(map, "published"), tags = template(map, "tags")
        map.rejectUnknownKeys(fieldKeys)
        guard let id, let title else { return nil }
        return Fields(id: id, title: title, summary: summary, price: price, regularPrice: regularPrice, image: image,
                      url: url, author: author, authorImage: authorImage, published: published, tags: tags, extra: extra)
    }

    static func detail(_ map: ConfigMapReader) -> Detail? {
        let url = template(map, "url", required: true)
        if let url, !url.parts.contains(where: { if case .path(let path) = $0 { path.description == "id" } else { false } }) {
            map.report("url", "must contain {id}, where the item's id goes")
        }
        let item = map.node("item") == nil ? JSONPath(".") : path(map, "item")
        map.rejectUnknownKeys(["url", "item"])
        guard let url, let item else { return nil }
        return Detail(url: url, item: item)
    }
}
