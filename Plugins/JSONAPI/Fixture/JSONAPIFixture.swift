import FeedCore
import FixtureKit
import Foundation
import JSONAPI

/// Generic paged JSON APIs over one recorded list (the 20 Target deals), one route per
/// paging style, for `plugin: json`:
///
/// - `/json-api/page?page=N&size=M` → `{"products": […], "page": N, "total_pages": T}`
/// - `/json-api/offset?skip=O&limit=L` → `{"products": […], "total": 20, "skip": O, "limit": L}`
/// - `/json-api/cursor?after=C&limit=L` → `{"data": {"items": […]}, "next_cursor": "…"|null}`
/// - `/json-api/next_url?page=N` → `{"results": […], "next": "next_url?page=N+1"|null}` (relative)
/// - `/json-api/link_header?page=N` → `[…]` with `Link: <…>; rel="next"`
/// - `/json-api/products/{id}` → `{"product": {…}}`, 404 for an unknown id
///
/// Pages hold 6 records unless asked otherwise.
public struct JSONAPIFixture: FixtureUpstream {
    public let name = "json-api"
    let records: [JSONValue]

    init(recorded: Data) {
        let body = try? JSONDecoder().decode(JSONValue.self, from: recorded)
        if case .array(let products)? = body?["products"] { records = products } else { records = [] }
    }

    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        let query = request.query
        func number(_ name: String, _ fallback: Int) -> Int { query[name].flatMap(Int.init) ?? fallback }
        switch request.path {
        case "/page":
            let size = max(1, number("size", 6)), page = number("page", 1)
            let total = (records.count + size - 1) / size
            return .json(["products": .array(slice((page - 1) * size, size)),
                          "page": .number(Decimal(page)), "total_pages": .number(Decimal(total))])
        case "/offset":
            let limit = max(1, number("limit", 6)), skip = number("skip", 0)
            return .json(["products": .array(slice(skip, limit)), "total": .number(Decimal(records.count)),
                          "skip": .number(Decimal(skip)), "limit": .number(Decimal(limit))])
        case "/cursor":
            let limit = max(1, number("limit", 6))
            let start = query["after"].flatMap(Self.position) ?? 0
            let end = start + limit
            return .json(["data": ["items": .array(slice(start, limit))],
                          "next_cursor": end < records.count ? .string(Self.cursor(end)) : .null])
        case "/next_url":
            let page = number("page", 1)
            let more = page * 6 < records.count
            return .json(["results": .array(slice((page - 1) * 6, 6)),
                          "next": more ? .string("next_url?page=\(page + 1)") : .null])
        case "/link_header":
            let page = number("page", 1)
            var response = FixtureResponse.json(.array(slice((page - 1) * 6, 6)))
            if page * 6 < records.count {
                let next = request.baseURL.appendingPathComponent("link_header").absoluteString + "?page=\(page + 1)"
                let first = request.baseURL.appendingPathComponent("link_header").absoluteString + "?page=1"
                response.headers["Link"] = "<\(next)>; rel=\"next\", <\(first)>; rel=\"first\""
            }
            return response
        default:
            guard request.path.hasPrefix("/products/") else { return nil }
            let id = String(request.path.dropFirst("/products/".count))
            guard let record = records.first(where: { $0["id"]?.scalarText == id }) else { return .notFound }
            return .json(["product": record])
        }
    }

    private func slice(_ start: Int, _ count: Int) -> [JSONValue] {
        guard start >= 0, start < records.count else { return [] }
        return Array(records[start..<min(records.count, start + count)])
    }

    /// Opaque-looking cursors, as real APIs hand out: `c-<position>`.
    static func cursor(_ position: Int) -> String { "c-\(position)" }
    static func position(_ cursor: String) -> Int? {
        cursor.hasPrefix("c-") ? Int(cursor.dropFirst(2)) : nil
    }
}

extension JSONAPISource: BuiltinSource {
    public static func fixture(_ options: FixtureOptions) -> any FixtureUpstream {
        recordedFixture
    }

    /// Made once a process: every fixture server of a test run serves the same recordings,
    /// and reading them again for each (hundreds of tests) kept the test process's threads busy.
    static let recordedFixture = JSONAPIFixture(recorded: recordedDeals)

    /// The Target deals described with `plugin: json`, the same fields over each paging
    /// style; the first is the one the conformance suite runs.
    static let dealFields = """
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
            url: "https://www.target.com/s?searchTerm={title}"
            tags: fulfillment
            extra:
              availability: availability

    """

    public static var fixtureSources: [FixtureSourceEntry] {
        let detail = "      detail:\n        url: \"{base}/json-api/products/{id}\"\n        item: product\n"
        func entry(_ id: String, _ path: String, items: String, paging: String, withDetail: Bool = false) -> FixtureSourceEntry {
            FixtureSourceEntry(id: id, plugin: plugin, path: "/json-api/\(path)", route: "json-api",
                               extraYAML: "    enabled: false\n    options:\n      items: \(items)\n"
                                   + dealFields
                                   + paging + (withDetail ? detail : ""))
        }
        return [
            entry("deals-page", "page", items: "products",
                  paging: "      paging: {style: page, size_param: size, size: 6, total_pages: total_pages}\n", withDetail: true),
            entry("deals-offset", "offset", items: "products",
                  paging: "      paging: {style: offset, offset_param: skip, limit: 6, total: total}\n"),
            entry("deals-cursor", "cursor", items: "data.items", paging: "      paging: {style: cursor, param: after, from: next_cursor}\n"),
            entry("deals-next-url", "next_url", items: "results", paging: "      paging: {style: next_url, from: next}\n"),
            entry("deals-link", "link_header", items: ".", paging: "      paging: {style: link_header}\n"),
        ]
    }
}
