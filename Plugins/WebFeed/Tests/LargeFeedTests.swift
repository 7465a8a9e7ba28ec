@testable import WebFeed
import FeedCore
import FeedSupport
import Foundation
import Testing

/// Feeds larger than libxml2 takes in one piece, and feeds with far more entries than a run
/// uses (issue 39): a document under `max_body` parses, and entries past `max_items` are
/// not built.
@Suite struct LargeFeedTests {
    static let url = URL(string: "https://big.example/feed.xml")!

    /// An RSS document of `items` items of about 100 bytes each.
    static func rss(items: Int) -> Data {
        var text = #"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Big</title>"#
        text.reserveCapacity(items * 110)
        for index in 0 ..< items {
            text += "<item><guid>https://big.example/\(index)</guid><title>Item number \(index)</title><link>https://big.example/\(index)</link></item>\n"
        }
        return Data((text + "</channel></rss>").utf8)
    }

    /// Over 10,000,000 bytes: libxml2, fed the whole document at once, refused it
    /// ("not well-formed XML (line 1: XML error 1)") though `max_body` is 20 MiB.
    @Test func aFeedOverTenMillionBytesParses() throws {
        let document = Self.rss(items: 105_000)
        #expect(document.count > 11_000_000)
        let feed = try XMLFeedReader.read(document, url: Self.url)
        #expect(feed.entries.count == 105_000)
        #expect(feed.entries.last?.title == "Item number 104999")
    }

    /// Reading stops after `max_items` entries: the 300,000 others are not built.
    @Test func entriesPastTheLimitAreNotBuilt() throws {
        let document = Self.rss(items: 300_000)
        let clock = ContinuousClock()
        let start = clock.now
        let feed = try XMLFeedReader.read(document, url: Self.url, limit: 20)
        #expect(feed.entries.map(\.title) == (0 ..< 20).map { "Item number \($0)" })
        // Reading the whole document takes seconds in a debug build; 20 entries, far less.
        #expect(clock.now - start < .seconds(2), "took \(clock.now - start)")
    }

    /// A JSON Feed of a million tiny items, read for 20 cards: 20 items are built.
    @Test func aJSONFeedKeepsOnlyTheItemsItNeeds() throws {
        var text = #"{"version":"https://jsonfeed.org/version/1.1","title":"Big","items":["#
        text.reserveCapacity(16_000_000)
        for index in 0 ..< 1_000_000 { text += (index == 0 ? "" : ",") + #"{"id":"\#(index)","title":"T\#(index)"}"# }
        text += "]}"
        let feed = try WebFeedSource.read(Data(text.utf8), url: Self.url, limit: 20, json: JSONBody.tape)
        #expect(feed.entries.map(\.title) == (0 ..< 20).map { "T\($0)" })
    }

    /// The whole source: `max_items` reaches the reader through the settings.
    @Test func theSourcePassesItsBudgetToTheReader() async throws {
        var settings = SourceSettings(id: "big", url: Self.url, environment: [:], json: JSONBody.tape)
        settings.maxItems = 5
        let source = try WebFeedSource(settings: settings, http: OneBody(Self.rss(items: 10_000)))
        let page = try await source.page(after: nil)
        #expect(page.cards.map(\.title) == (0 ..< 5).map { "Item number \($0)" })
    }
}

/// A transport that answers every GET with one body.
struct OneBody: HTTPTransport {
    let body: Data
    init(_ body: Data) { self.body = body }
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": "application/rss+xml"], body: body, url: request.url)
    }
}
