import FeedCore
import FeedSupport
import Foundation

/// Turns one record into a card as the `fields:` say. Pure: no I/O.
struct JSONAPIMapping: Sendable {
    let sourceID: String
    let options: JSONAPIOptions
    /// The source's `url`, which relative URLs resolve against.
    let base: URL

    /// The card, or why the record is skipped.
    func card(for record: JSONValue) -> Result<Card, FieldProblem> {
        let fields = options.fields
        guard case .object = record else { return .failure(FieldProblem("not an object but \(record.kindDescription)")) }
        guard let id = fields.id.text(in: record) else { return .failure(FieldProblem("no id at \(Self.describe(fields.id))")) }
        if let path = fields.title.path, let value = path.value(in: record), value.stringValue == nil {
            return .failure(FieldProblem("the title at \"\(path)\" is \(value.kindDescription), not text"))
        }
        guard let title = fields.title.text(in: record) else { return .failure(FieldProblem("no title at \(Self.describe(fields.title))")) }
        let author = fields.author?.text(in: record).map {
            Card.Author(name: $0, image: fields.authorImage.flatMap { url($0, in: record) })
        }
        return .success(Card(
            source: sourceID, upstreamID: id, kind: options.kind, title: title,
            summary: fields.summary?.text(in: record), price: price(in: record),
            image: fields.image.flatMap { url($0, in: record) }, url: fields.url.flatMap { url($0, in: record) },
            author: author, published: fields.published.flatMap { date($0, in: record) },
            tags: fields.tags.map { tags($0, in: record) } ?? [],
            details: Dictionary(options.fields.extra.compactMap { extra in extra.path.value(in: record).map { (extra.name, $0) } },
                                uniquingKeysWith: { first, _ in first })))
    }

    static func describe(_ template: FieldTemplate) -> String {
        template.parts.map { part -> String in
            switch part {
            case .literal(let text): text
            case .path(let path): template.path == nil ? "{\(path)}" : "\"\(path)\""
            }
        }.joined()
    }

    /// `price` (or `regular_price` alone, as the price) exactly; nil when neither reads as a number.
    func price(in record: JSONValue) -> Price? {
        let now = options.fields.price.flatMap { amount($0, in: record) }
        let regular = options.fields.regularPrice.flatMap { amount($0, in: record) }
        guard let amount = now ?? regular else { return nil }
        return Price(amount: amount, currency: options.currency, regular: now == nil || regular == amount ? nil : regular)
    }

    private func amount(_ template: FieldTemplate, in record: JSONValue) -> Decimal? {
        let value: Decimal?
        if let path = template.path, case .number(let number)? = path.value(in: record) {
            value = number
        } else {
            value = template.text(in: record).flatMap(Money.parse)
        }
        guard let value else { return nil }
        guard options.minorUnits else { return value }
        return value / 100
    }

    /// An absolute http(s) URL; relative ones resolve against the source's `url`.
    func url(_ template: FieldTemplate, in record: JSONValue) -> URL? {
        guard let text = template.text(in: record, encodingForURL: true) else { return nil }
        if let absolute = ConfigMapReader.httpURL(text) { return absolute }
        return URL(string: text, relativeTo: base).flatMap { ConfigMapReader.httpURL($0.absoluteString) }
    }

    func date(_ template: FieldTemplate, in record: JSONValue) -> Date? {
        if let path = template.path, case .number(let number)? = path.value(in: record) {
            return UpstreamDate.unix(number)
        }
        return template.text(in: record).flatMap(UpstreamDate.parse)
    }

    func tags(_ template: FieldTemplate, in record: JSONValue) -> [String] {
        if let path = template.path, case .array(let items)? = path.value(in: record) {
            return items.compactMap { $0.scalarText?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return template.text(in: record).map { [$0] } ?? []
    }
}

/// The date formats upstreams use, read in UTC.
enum UpstreamDate {
    /// RFC 3339 / ISO 8601 (a date alone, or a time without an offset, is UTC), RFC 1123,
    /// or unix seconds / milliseconds written as text.
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let number = Decimal(string: text), text.allSatisfy({ $0.isNumber || $0 == "." }) { return unix(number) }
        if let date = RFC3339.date(from: text) { return date }
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd",
                       "EEE, dd MMM yyyy HH:mm:ss zzz", "EEE, d MMM yyyy HH:mm:ss Z"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// Seconds since 1970, or milliseconds when the number is too large to be seconds
    /// (past the year 5138).
    static func unix(_ number: Decimal) -> Date? {
        let value = NSDecimalNumber(decimal: number).doubleValue
        guard value.isFinite, value >= 0 else { return nil }
        return Date(timeIntervalSince1970: value >= 1e11 ? value / 1000 : value)
    }
}
