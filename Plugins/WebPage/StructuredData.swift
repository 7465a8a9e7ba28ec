import FeedCore
import FeedSupport
import Foundation
import HTMLQuery

/// Cards from what a page says of itself for search engines, when no selectors are set:
/// JSON-LD (`Product` with its `Offer` or `AggregateOffer`, `ItemList`, `Article`,
/// `NewsArticle`, `BlogPosting`, also inside `@graph`), else microdata (`itemscope` of the
/// same schema.org types), else OpenGraph (`og:` and `product:price:` meta tags). A shop's
/// product page is one card with its price.
struct StructuredData {
    let sourceID: String
    let page: HTMLPage
    let json: any JSONBodyReader
    let currency: String?

    static let articleTypes: Set<String> = ["Article", "NewsArticle", "BlogPosting", "Report", "TechArticle", "ScholarlyArticle"]
    static let productTypes: Set<String> = ["Product", "ProductGroup", "IndividualProduct"]
    /// A product's identifiers kept in its card's details: what tells one product at two shops.
    static let productCodes = ["gtin", "gtin8", "gtin12", "gtin13", "gtin14", "mpn", "brand"]

    /// The queries this reader asks of every page, read once.
    static let linkedDataScripts = query("//script[@type='application/ld+json']")
    static let microdataScopes = query("//*[@itemscope and @itemtype]")
    static let metaTags = query("//meta[@property or @name]")
    static let microdataProperties: [String: HTMLQuery] = Dictionary(uniqueKeysWithValues: [
        "headline", "name", "url", "price", "priceCurrency", "sku", "gtin13", "description", "image", "datePublished",
    ].compactMap { name in query(".//*[@itemprop='\(name)']").map { (name, $0) } })

    /// A fixed XPath of ours; nil (and so nothing found) only if libxml2 could not read it,
    /// which the tests would show.
    private static func query(_ xpath: String) -> HTMLQuery? {
        try? HTMLQuery("xpath:" + xpath)
    }

    /// The nodes a fixed query finds under `node` (none when it cannot be answered).
    private static func select(_ query: HTMLQuery?, under node: HTMLNode) -> [HTMLNode] {
        guard let query else { return [] }
        return (try? node.select(query)) ?? []
    }

    /// The cards, and which kind of data made them (nil when the page has none).
    func cards(under root: HTMLNode) -> (cards: [Card], from: String)? {
        let linked = fromJSONLD(root)
        if !linked.isEmpty { return (linked, "JSON-LD") }
        let micro = fromMicrodata(root)
        if !micro.isEmpty { return (micro, "microdata") }
        if let card = fromOpenGraph(root) { return ([card], "OpenGraph") }
        return nil
    }

    // MARK: - JSON-LD

    func fromJSONLD(_ root: HTMLNode) -> [Card] {
        let scripts = Self.select(Self.linkedDataScripts, under: root)
        var objects: [[String: JSONValue]] = []
        for script in scripts {
            guard let value = try? json.decode(JSONValue.self, from: Data(script.rawText.utf8)) else { continue }
            collect(value, into: &objects, depth: 0)
        }
        var seen = Set<String>()
        return objects.compactMap(card(linkedData:)).filter { seen.insert($0.id).inserted }
    }

    /// Every typed object: the value itself, its `@graph`, and an `ItemList`'s items.
    private func collect(_ value: JSONValue, into objects: inout [[String: JSONValue]], depth: Int) {
        guard depth < 8 else { return }
        switch value {
        case .array(let values):
            for value in values { collect(value, into: &objects, depth: depth + 1) }
        case .object(let object):
            if let graph = object["@graph"] { collect(graph, into: &objects, depth: depth + 1) }
            let types = Self.types(object["@type"])
            if types.contains("ItemList"), case .array(let elements)? = object["itemListElement"] {
                for element in elements {
                    guard case .object(let listItem) = element else { continue }
                    if let item = listItem["item"], case .object = item { collect(item, into: &objects, depth: depth + 1) } else { objects.append(listItem) }
                }
            } else if !types.isEmpty {
                objects.append(object)
            }
        default:
            return
        }
    }

    static func types(_ value: JSONValue?) -> Set<String> {
        switch value {
        case .string(let type)?: [type.split(separator: "/").last.map(String.init) ?? type]
        case .array(let values)?: Set(values.compactMap { $0.stringValue?.split(separator: "/").last.map(String.init) })
        default: []
        }
    }

    private func card(linkedData object: [String: JSONValue]) -> Card? {
        let types = Self.types(object["@type"])
        let isProduct = !types.isDisjoint(with: Self.productTypes)
        let isArticle = !types.isDisjoint(with: Self.articleTypes)
        let isListItem = types.contains("ListItem") || types.isEmpty
        guard isProduct || isArticle || isListItem else { return nil }
        guard let title = text(object["headline"]) ?? text(object["name"]), !title.isEmpty else { return nil }
        // Without an address of its own, an item is where the page is.
        let own = link(text(object["url"]) ?? text(object["@id"]))
        let url = own ?? page.url
        let id = [object["sku"], object["gtin13"], object["gtin"], object["productID"], object["mpn"]].lazy.compactMap(text).first
            ?? own?.absoluteString ?? Self.hash(title, own)
        let price = isProduct ? offerPrice(object["offers"]) : nil
        let author: Card.Author? = text(object["author"]).map { Card.Author(name: $0) }
        // What identifies a product across shops (merge: same-item), as the page names it.
        var details: [String: JSONValue] = [:]
        if isProduct {
            for key in Self.productCodes { if let value = text(object[key]) { details[key] = .string(value) } }
        }
        return Card(source: sourceID, upstreamID: id, kind: isProduct ? .product : .post, title: HTMLText.collapse(title),
                    summary: text(object["description"]).map(HTMLText.plain), price: price, image: imageURL(object["image"]), url: url,
                    author: author, published: text(object["datePublished"]).flatMap(FeedDates.date), details: details)
    }

    /// The price of an `Offer`, an `AggregateOffer` (its low price) or the first of many.
    private func offerPrice(_ value: JSONValue?) -> Price? {
        switch value {
        case .array(let offers)?: return offers.lazy.compactMap { offerPrice($0) }.first
        case .object(let offer)?:
            guard let amount = [offer["price"], offer["lowPrice"]].lazy.compactMap({ self.decimal($0) }).first else { return nil }
            let code = text(offer["priceCurrency"]) ?? currency
            return Price(amount: amount, currency: code, max: decimal(offer["highPrice"]))
        default: return nil
        }
    }

    private func decimal(_ value: JSONValue?) -> Decimal? {
        switch value {
        case .number(let number)?: number
        case .string(let text)?: PriceText.amount(in: text)
        default: nil
        }
    }

    /// A string, a number as text, or an object's `name` (an author, a brand).
    private func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: return text.isEmpty ? nil : text
        case .number(let number)?: return "\(number)"
        case .object(let object)?: return text(object["name"])
        case .array(let values)?: return values.lazy.compactMap { self.text($0) }.first
        default: return nil
        }
    }

    private func imageURL(_ value: JSONValue?) -> URL? {
        switch value {
        case .string(let text)?: return link(text)
        case .array(let values)?: return values.lazy.compactMap { self.imageURL($0) }.first
        case .object(let object)?: return link(text(object["url"]) ?? text(object["contentUrl"]))
        default: return nil
        }
    }

    // MARK: - Microdata

    func fromMicrodata(_ root: HTMLNode) -> [Card] {
        let scopes = Self.select(Self.microdataScopes, under: root)
        var seen = Set<String>()
        return scopes.compactMap { scope -> Card? in
            let types = Self.types(.string(scope.attribute("itemtype") ?? ""))
            let isProduct = !types.isDisjoint(with: Self.productTypes)
            guard isProduct || !types.isDisjoint(with: Self.articleTypes) else { return nil }
            func property(_ name: String) -> String? {
                guard let node = Self.select(Self.microdataProperties[name], under: scope).first else { return nil }
                let value = node.attribute("content") ?? node.attribute("href") ?? node.attribute("src") ?? node.attribute("datetime") ?? node.text
                return value.isEmpty ? nil : value
            }
            guard let title = property("headline") ?? property("name") else { return nil }
            let own = link(property("url"))
            let url = own ?? page.url
            var price: Price?
            if isProduct, let amount = property("price").flatMap(PriceText.amount(in:)) {
                price = Price(amount: amount, currency: property("priceCurrency") ?? currency)
            }
            let id = property("sku") ?? property("gtin13") ?? own?.absoluteString ?? Self.hash(title, own)
            guard seen.insert(id).inserted else { return nil }
            return Card(source: sourceID, upstreamID: id, kind: isProduct ? .product : .post, title: title,
                        summary: property("description"), price: price, image: link(property("image")), url: url,
                        published: property("datePublished").flatMap(FeedDates.date))
        }
    }

    // MARK: - OpenGraph

    func fromOpenGraph(_ root: HTMLNode) -> Card? {
        let metas = Self.select(Self.metaTags, under: root)
        var properties: [String: String] = [:]
        for meta in metas {
            guard let name = (meta.attribute("property") ?? meta.attribute("name"))?.lowercased(), let content = meta.attribute("content"),
                  properties[name] == nil else { continue }
            properties[name] = content
        }
        guard let title = properties["og:title"], !title.isEmpty else { return nil }
        let url = link(properties["og:url"]) ?? page.url
        var price: Price?
        if let amount = (properties["product:price:amount"] ?? properties["og:price:amount"]).flatMap(PriceText.amount(in:)) {
            price = Price(amount: amount, currency: properties["product:price:currency"] ?? properties["og:price:currency"] ?? currency)
        }
        return Card(source: sourceID, upstreamID: url.absoluteString, kind: price != nil || properties["og:type"] == "product" ? .product : .post,
                    title: title, summary: properties["og:description"], price: price, image: link(properties["og:image"]), url: url,
                    published: properties["article:published_time"].flatMap(FeedDates.date))
    }

    /// An address on the web, resolved against the page; anything but http(s) is none.
    func link(_ text: String?) -> URL? {
        Self.link(text, base: page.url)
    }

    static func link(_ text: String?, base: URL) -> URL? {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty,
              let url = URL(string: text, relativeTo: base)?.absoluteURL,
              ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { return nil }
        return url
    }

    /// An id for a card with neither id nor link: a hash of its title and link.
    static func hash(_ title: String, _ url: URL?) -> String {
        String(FNV1a.hash(Array((title + "\n" + (url?.absoluteString ?? "")).utf8)), radix: 16)
    }
}
