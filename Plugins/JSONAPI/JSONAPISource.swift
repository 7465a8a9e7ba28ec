import FeedCore
import FeedSupport
import Foundation

/// `plugin: json`: any JSON API described in Sources.yml (where the records are, which
/// field is which, how it pages, where the detail is). No Swift, no rebuild.
public struct JSONAPISource: FeedSource {
    public static let plugin = "json"
    /// A described API has no recorded upstream in the binary; its cached pages serve offline.
    public static let snapshots: [RecordedResponse] = []
    /// The recorded deals its fixture route serves in every paging style.
    package static var recordedDeals: Data { Data(PackageResources.deals_list_json) }

    let settings: SourceSettings
    let http: any HTTPTransport
    let options: JSONAPIOptions
    let mapping: JSONAPIMapping

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        self.settings = settings
        self.http = http
        options = try JSONAPIOptions(settings)
        mapping = JSONAPIMapping(sourceID: settings.id, options: options, base: settings.url)
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let response = try await http.get(options.paging.url(base: settings.url, cursor: cursor))
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        let body = try listBody(response.body)
        let records = try records(in: body)
        var cards: [Card] = []
        var skipped: [SkippedRecord] = []
        for (index, record) in records.enumerated() {
            switch mapping.card(for: record) {
            case .success(let card): cards.append(card)
            case .failure(let problem): skipped.append(SkippedRecord(path: "\(itemsPath)[\(index)]", reason: problem.message))
            }
        }
        // A page of max_items records or more spends the budget: the walk ends with it
        // (the records past max_items were never read).
        let next = records.count >= settings.maxItems
            ? nil : try options.paging.next(after: cursor, count: records.count, body: body, response: response)
        return SourcePage(cards: cards, next: next, skipped: skipped)
    }

    /// The body, with no more than `max_items` records of its list built: a body of half a
    /// million tiny records would otherwise take ten times its size in memory.
    private func listBody(_ data: Data) throws -> JSONValue {
        let keys = options.items.steps.compactMap { step -> String? in if case .key(let key) = step { key } else { nil } }
        guard keys.count == options.items.steps.count else { return try settings.json.decode(JSONValue.self, from: data) }
        return try settings.json.value(from: data, keepingAtMost: settings.maxItems, ofListAt: keys)
    }

    /// `products`, or `$` for a body that is the list itself.
    private var itemsPath: String { options.items.steps.isEmpty ? "$" : options.items.description }

    /// The records at `items`; a wrong path names what the body has instead.
    func records(in body: JSONValue) throws -> [JSONValue] {
        switch options.items.resolve(in: body) {
        case .success(.array(let records)):
            return records
        case .success(let other):
            throw SourceError.undecodable(path: itemsPath, reason: "expected the list of records (items: \(options.items)), got \(other.kindDescription)")
        case .failure(let miss):
            let has = miss.available.map { $0.isEmpty ? "it is an empty object" : "it has: \($0.joined(separator: ", "))" }
                ?? "it is \(miss.found ?? "not an object")"
            let place = miss.missing.contains(".") || miss.missing.contains("[") ? "at \(miss.missing)" : "\"\(miss.missing)\""
            throw SourceError.failed("no \(place) in the body; \(has) (check items: \(options.items))")
        }
    }

    public func detail(id: String) async throws -> Card {
        guard let detail = options.detail else { throw SourceError.noDetailEndpoint }
        // Encoded here, so even a template that starts with {id} cannot leave its path.
        let record: JSONValue = ["id": .string(PathSegment.encode(id))]
        guard let text = detail.url.text(in: record),
              let url = URL(string: text, relativeTo: settings.url)?.absoluteURL
        else { throw SourceError.notFound("no item with id \(id) (detail.url makes no URL of it)") }
        let response = try await http.get(url)
        // The URL asked is said: a relative detail.url resolves against the list URL's
        // folder, which is not always what was meant.
        if response.status == 404 || response.status == 410 {
            throw SourceError.notFound("no item with id \(id) (\(url.redactedString) answered \(response.status))")
        }
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        let body = try settings.json.decode(JSONValue.self, from: response.body)
        guard let item = detail.item.value(in: body) else {
            throw SourceError.undecodable(path: detail.item.description, reason: "no record at detail.item: \(detail.item)")
        }
        switch mapping.card(for: item) {
        case .success(let card) where card.upstreamID == id: return card
        case .success(let card): throw SourceError.noDetail("the detail endpoint answered with item \(card.upstreamID) for \(id)")
        case .failure(let problem): throw SourceError.undecodable(path: detail.item.description, reason: problem.message)
        }
    }
}
