import FeedConfig
import FeedCore
import FeedEngine
import FeedSourceTesting
import Foundation
@testable import JSONAPI
import Testing

/// `plugin: json` on its own: paths, templates, dates, options and mapping of the
/// recorded Target deals.
@Suite struct JSONAPITests {
    static let deal = try! JSONDecoder().decode(JSONValue.self, from: Data(PackageResources.deals_list_json))["products"]
        .flatMap { if case .array(let items) = $0 { items.first } else { nil } } ?? .null

    @Test func theConformanceSuitePasses() async throws {
        try await Conformance.check(JSONAPISource.self)
    }

    @Test func pathsReadKeysAndIndexes() throws {
        let body: JSONValue = ["data": ["items": [["id": 7], ["id": 8]]], "list": [1, 2]]
        #expect(JSONPath("data.items[1].id")?.value(in: body) == 8)
        #expect(JSONPath("list[0]")?.value(in: body) == 1)
        #expect(JSONPath(".")?.value(in: body) == body)
        #expect(JSONPath("[1]")?.value(in: ["a", "b"]) == "b")
        for bad in ["", "a..b", "a[", "a[x]", "a[-1]", "a b", ".a"] {
            #expect(JSONPath(bad) == nil, "\(bad) should not parse")
        }
        guard case .failure(let miss) = JSONPath("data.things")!.resolve(in: body) else {
            Issue.record("data.things resolved")
            return
        }
        #expect(miss.missing == "data.things")
        #expect(miss.available == ["items"])
    }

    @Test func templatesFillPlaceholdersAndEncodeForURLs() throws {
        let record: JSONValue = ["first": "Ada", "last": "Lovelace", "id": "a/b?c", "price": 7.5]
        let name = try FieldTemplate.parse("{first} {last}").get()
        #expect(name.text(in: record) == "Ada Lovelace")
        #expect(try FieldTemplate.parse("{first} {missing}").get().text(in: record) == "Ada")
        #expect(try FieldTemplate.parse("{missing}").get().text(in: record) == nil)
        let link = try FieldTemplate.parse("https://shop.example/p/{id}").get()
        #expect(link.text(in: record, encodingForURL: true) == "https://shop.example/p/a%2Fb%3Fc")
        #expect(try FieldTemplate.parse("price").get().text(in: record) == "7.5")
        #expect(throws: FieldProblem("\"{first\" has a { without its }")) { try FieldTemplate.parse("{first").get() }
        #expect(throws: FieldProblem("{a b} in \"x {a b}\" is not a path: use dotted keys with [n] indexes")) {
            try FieldTemplate.parse("x {a b}").get()
        }
    }

    @Test func datesInEveryDocumentedFormatAreUTC() {
        let expected = Date(timeIntervalSince1970: 1_668_816_000)  // 2022-11-19T00:00:00Z
        for text in ["2022-11-19T00:00:00Z", "2022-11-19T01:00:00+01:00", "2022-11-19T00:00:00", "2022-11-19",
                     "Sat, 19 Nov 2022 00:00:00 GMT", "1668816000", "1668816000000"] {
            #expect(UpstreamDate.parse(text) == expected, "\(text)")
        }
        #expect(UpstreamDate.parse("yesterday") == nil)
    }

    @Test func linkHeadersFindRelNext() throws {
        #expect(LinkHeader.next(#"<https://a.example/p?page=2>; rel="next", <https://a.example/p?page=9>; rel="last""#)
            == "https://a.example/p?page=2")
        #expect(LinkHeader.next(#"<https://a.example/1>; rel="prev first", <https://a.example/3>; rel="last next""#)
            == "https://a.example/3")
        #expect(LinkHeader.next(#"<https://a.example/9>; rel="last""#) == nil)
        #expect(LinkHeader.next(#"<https://a.example/p?ids=1,2>; rel="prev", <https://a.example/p?ids=3,4>; rel=next"#)
            == "https://a.example/p?ids=3,4")
        #expect(try JSONAPIPaging.sameHost("https://a.example:443/2", relativeTo: URL(string: "https://a.example/1")!) == "https://a.example:443/2")
        #expect(throws: SourceError.self) {
            try JSONAPIPaging.sameHost("http://a.example/2", relativeTo: URL(string: "https://a.example/1")!)
        }
    }

    static let dealOptions = """
        items: products
        kind: deal
        currency: USD
        minor_units: true
        fields:
          id: id
          title: title
          summary: aisle
          price: sale_price.amount_in_cents
          regular_price: regular_price.amount_in_cents
          image: image_url
          url: "https://www.target.com/p/{id}"
          tags: fulfillment
          extra: {availability: availability, cents: regular_price.amount_in_cents}
        """

    @Test func aRecordedDealBecomesThisExactCard() throws {
        let settings = try TestConfig.settings(for: JSONAPISource.self, url: "https://api.target.com/deals", options: Self.dealOptions)
        let source = try JSONAPISource(settings: settings, http: RecordedUpstream([:]))
        let card = try source.mapping.card(for: Self.deal).get()
        #expect(card == Card(
            source: "json", upstreamID: "0", kind: .deal, title: "VIZIO D-Series 40\" Class 1080p Full-Array LED HD Smart TV",
            summary: "b2", price: Price(amount: Decimal(string: "229.99")!, currency: "USD"),
            image: URL(string: "https://appstorage.target.com/app-data/native-tha-images/1.jpg"),
            url: URL(string: "https://www.target.com/p/0"), tags: ["Online"],
            details: ["availability": "In stock", "cents": 22999]))
    }

    @Test func aRecordWithoutIDOrTitleIsSkippedWithItsPath() async throws {
        let body = #"{"products": [{"id": 1, "title": "One"}, {"title": "No id"}, {"id": 3}, "text"]}"#
        let settings = try TestConfig.settings(for: JSONAPISource.self, url: "https://shop.example/api",
                                               options: "items: products\nfields: {id: id, title: title}")
        let source = try JSONAPISource(settings: settings, http: RecordedUpstream(bodies: ["https://shop.example/api": Data(body.utf8)]))
        let page = try await source.page(after: nil)
        #expect(page.cards.map(\.id) == ["json:1"])
        #expect(page.skipped.map(\.description) == [
            "skipped products[1]: no id at \"id\"", "skipped products[2]: no title at \"title\"",
            "skipped products[3]: not an object but text",
        ])
        #expect(page.next == nil)
    }

    /// An API that caps its pages at 30 while `limit: 50` asks for more, total 47: the walk
    /// goes on to the total (issue 28, defect 14); offset and page styles alike.
    @Test func aShortPageDoesNotEndTheWalkWhileTheTotalSaysMoreRemain() async throws {
        func body(_ ids: ClosedRange<Int>, _ extra: String) -> Data {
            Data((#"{"items": ["# + ids.map { #"{"id": \#($0), "title": "Item \#($0)"}"# }.joined(separator: ",") + "], \(extra)}").utf8)
        }
        func source(paging: String, _ bodies: [String: Data]) throws -> JSONAPISource {
            try JSONAPISource(
                settings: try TestConfig.settings(for: JSONAPISource.self, url: "https://api.example/items",
                                                  options: "items: items\nfields: {id: id, title: title}\npaging: \(paging)"),
                http: RecordedUpstream(bodies: bodies))
        }
        let offset = try source(paging: "{style: offset, limit: 50, total: total}", [
            "https://api.example/items?offset=0&limit=50": body(1...30, #""total": 47"#),
            "https://api.example/items?offset=30&limit=50": body(31...47, #""total": 47"#),
        ])
        let first = try await offset.page(after: nil)
        #expect(first.cards.count == 30 && first.next == "30")
        let second = try await offset.page(after: first.next)
        #expect(second.cards.map(\.id).last == "json:47" && second.next == nil)

        let paged = try source(paging: "{style: page, size_param: per_page, size: 50, total_pages: pages}", [
            "https://api.example/items?page=1&per_page=50": body(1...30, #""pages": 2"#),
            "https://api.example/items?page=2&per_page=50": body(31...47, #""pages": 2"#),
        ])
        let one = try await paged.page(after: nil)
        #expect(one.cards.count == 30 && one.next == "2")
        #expect(try await paged.page(after: one.next).next == nil)

        // Without a total, a short page still ends the walk, as documented.
        let untotalled = try source(paging: "{style: offset, limit: 50}",
                                    ["https://api.example/items?offset=0&limit=50": body(1...30, #""more": true"#)])
        #expect(try await untotalled.page(after: nil).next == nil)
    }

    @Test func aWrongItemsPathNamesWhatTheBodyHas() async throws {
        let body = #"{"products": [], "total": 0, "skip": 0, "limit": 30}"#
        let settings = try TestConfig.settings(for: JSONAPISource.self, url: "https://shop.example/api",
                                               options: "items: data\nfields: {id: id, title: title}")
        let source = try JSONAPISource(settings: settings, http: RecordedUpstream(bodies: ["https://shop.example/api": Data(body.utf8)]))
        await #expect(throws: SourceError.failed("no \"data\" in the body; it has: limit, products, skip, total (check items: data)")) {
            try await source.page(after: nil)
        }
    }

    @Test func everyBadOptionIsReportedWithItsLineAndColumn() throws {
        let yaml = """
            sources:
              - id: shop
                plugin: json
                url: https://shop.example/api
                options:
                  items: "data..x"
                  kind: gadget
                  fields:
                    title: "{name"
                    price: price
                    colour: colour
                  paging: {style: pages}
                  detail: {url: "https://shop.example/p"}
                  limit: 5
            """
        do {
            _ = try ConfigLoader(registry: SourceRegistry([JSONAPISource.self]), environment: [:]).load(text: yaml, file: "Sources.yml")
            Issue.record("the configuration loaded")
        } catch {
            #expect(error.issues.map(\.description) == [
                "Sources.yml:6:7: sources[0].options.currency: is required with fields.price: the ISO 4217 code of every price (USD, EUR)",
                "Sources.yml:6:14: sources[0].options.items: \"data..x\" is not a path: use dotted keys with [n] indexes (data.items, [0].id), or \".\" for the body",
                "Sources.yml:7:13: sources[0].options.kind: must be one of deal, product, post, person, item, got \"gadget\"",
                "Sources.yml:9:9: sources[0].options.fields.id: is required",
                "Sources.yml:9:16: sources[0].options.fields.title: \"{name\" has a { without its }",
                "Sources.yml:11:9: sources[0].options.fields.colour: unknown key (known: author, author_image, extra, id, image, price, published, regular_price, summary, tags, title, url)",
                "Sources.yml:12:23: sources[0].options.paging.style: must be one of page, offset, cursor, next_url, link_header, got \"pages\"",
                "Sources.yml:13:21: sources[0].options.detail.url: must contain {id}, where the item's id goes",
                "Sources.yml:14:7: sources[0].options.limit: unknown key (known: currency, detail, fields, items, kind, minor_units, paging)",
            ])
        }
    }
}
