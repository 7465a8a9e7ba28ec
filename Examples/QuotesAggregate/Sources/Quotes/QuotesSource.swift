import FeedCore
import FeedSupport
import Foundation

/// Quotes from a dummyjson-style API: `GET {url}/quotes?limit=N&skip=K` answers
/// `{"quotes": [{"id", "quote", "author"}], "total", "skip", "limit"}`; the cursor is the
/// next `skip`, and the walk ends when `skip + limit` reaches `total`.
public struct QuotesSource: FeedSource {
    public static let plugin = "quotes"

    public static let snapshots = [
        RecordedResponse(url: "https://dummyjson.com/quotes?limit=3&skip=0", bytes: PackageResources.quotes_page1_json),
        RecordedResponse(url: "https://dummyjson.com/quotes?limit=3&skip=3", bytes: PackageResources.quotes_page2_json),
    ]

    let settings: SourceSettings
    let http: any HTTPTransport
    let limit: Int

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        let options = settings.optionsReader()
        limit = options.integer("limit", minimum: 1) ?? 3
        try options.finish(allowedKeys: ["limit"])
        self.settings = settings
        self.http = http
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let skip = cursor.flatMap(Int.init) ?? 0
        let url = settings.url.appendingPathComponent("quotes")
            .appending(queryItems: [URLQueryItem(name: "limit", value: "\(limit)"), URLQueryItem(name: "skip", value: "\(skip)")])
        let page = try await http.getJSON(QuotesPage.self, from: url, with: settings.json)
        let cards = page.quotes.elements.map { quote in
            Card(source: settings.id, upstreamID: "\(quote.id)", kind: .post, title: quote.quote,
                 author: Card.Author(name: quote.author))
        }
        let next = page.skip + page.limit < page.total && !page.quotes.elements.isEmpty ? "\(page.skip + page.limit)" : nil
        return SourcePage(cards: cards, next: next, total: page.total, skipped: page.quotes.skipped)
    }
}

/// The upstream's page, with its own field names.
struct QuotesPage: Decodable {
    var quotes: LenientList<Quote>
    var total: Int
    var skip: Int
    var limit: Int
}

struct Quote: Decodable {
    var id: Int
    var quote: String
    var author: String
}
