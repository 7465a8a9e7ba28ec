import FeedCore
import Foundation
import HTMLQuery

/// The `options:` of a `plugin: html` source, validated: every problem at its line and
/// column, a selector's at the character it goes wrong, all at once.
struct WebPageOptions: Sendable {
    /// Where each card is on the page (nil: the page's structured data makes the cards).
    var item: HTMLQuery?
    var fields: [Field: HTMLQuery]
    /// The next page's address (`a[rel=next] @href`).
    var next: HTMLQuery?
    /// A `strptime` format for dates that are neither RFC 3339 nor RFC 2822 (`%d.%m.%Y`).
    var dateFormat: String?
    /// The currency of prices that name none.
    var currency: String?
    var kind: Card.Kind?
    var tags: [String]

    /// What a card's fields are read from, under its item.
    enum Field: String, CaseIterable, Sendable {
        case title, link, summary, content, date, image, price, id, author
    }

    static let keys = ["item", "next", "date_format", "currency", "kind", "tags"] + Field.allCases.map(\.rawValue)

    init(_ settings: SourceSettings) throws {
        let options = settings.optionsReader()
        item = options.htmlQuery("item")
        var fields: [Field: HTMLQuery] = [:]
        for field in Field.allCases {
            if let query = options.htmlQuery(field.rawValue) { fields[field] = query }
        }
        self.fields = fields
        next = options.htmlQuery("next")
        dateFormat = options.string("date_format")
        currency = options.node("currency") == nil ? nil : options.currency("currency", default: "")
        kind = options.choice("kind", from: Card.Kind.allCases.map(\.rawValue)).flatMap(Card.Kind.init(rawValue:))
        tags = (options.list("tags") ?? []).compactMap { _, node in
            if case .scalar(let scalar) = node.value, scalar.kind != .null, !scalar.text.isEmpty { scalar.text } else { nil }
        }
        if options.node("item") == nil, let field = Field.allCases.first(where: { options.node($0.rawValue) != nil }) {
            options.report(field.rawValue, "needs item: the CSS selector (or xpath:) of each card on the page; without selectors the page's structured data makes the cards")
        }
        if options.node("item") != nil, options.node("title") == nil {
            options.report("title", "is required with item: the selector of each card's title under its item (\"h2 a\")")
        }
        try options.finish(allowedKeys: Self.keys)
    }
}
