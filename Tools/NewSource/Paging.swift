/// The paging styles the scaffold can start from. Each knows the pieces of code and
/// example data that differ between styles; everything else is shared.
enum Paging: String {
    /// One list, no paging.
    case none
    /// `?page=N`, ends at `total_pages`.
    case page
    /// `?offset=O&limit=L`, ends at `total`.
    case offset
    /// `?cursor=C`, ends when `next_cursor` is null.
    case cursor

    /// The example's five items split into the recorded pages: (request suffix, body).
    func recordedPages(items: [String]) -> [(suffix: String, body: String)] {
        switch self {
        case .none:
            return [("items", #"{"items": [\#(items.joined(separator: ", "))]}"#)]
        case .page:
            return [
                ("items?page=1", #"{"items": [\#(items[0..<3].joined(separator: ", "))], "page": 1, "total_pages": 2}"#),
                ("items?page=2", #"{"items": [\#(items[3...].joined(separator: ", "))], "page": 2, "total_pages": 2}"#),
            ]
        case .offset:
            return [
                ("items?offset=0&limit=3", #"{"items": [\#(items[0..<3].joined(separator: ", "))], "total": 5}"#),
                ("items?offset=3&limit=3", #"{"items": [\#(items[3...].joined(separator: ", "))], "total": 5}"#),
            ]
        case .cursor:
            return [
                ("items", #"{"items": [\#(items[0..<3].joined(separator: ", "))], "next_cursor": "after-3"}"#),
                ("items?cursor=after-3", #"{"items": [\#(items[3...].joined(separator: ", "))], "next_cursor": null}"#),
            ]
        }
    }

    /// Wire fields of the page besides `items`.
    var pageFields: String {
        switch self {
        case .none: ""
        case .page: "\n    /// The page number the upstream answered (from 1) and how many there are.\n    var page: Int\n    var total_pages: Int"
        case .offset: "\n    /// How many items the upstream has in all.\n    var total: Int"
        case .cursor: "\n    /// The cursor of the next page; `null` on the last page.\n    var next_cursor: String?"
        }
    }

    /// What the source's doc comment says about paging.
    var summary: String {
        switch self {
        case .none: "`GET {url}/items` is the whole list (no paging)."
        case .page: "`GET {url}/items?page=N` pages by number until `total_pages`; the cursor is the next page number."
        case .offset: "`GET {url}/items?offset=O&limit=3` pages by offset until `total`; the cursor is the next offset."
        case .cursor: "`GET {url}/items?cursor=C` follows `next_cursor` until it is null; the cursor is the upstream's."
        }
    }

    /// The body of `page(after:)`, given the request and decode lines around it.
    var pageFunction: String {
        switch self {
        case .none:
            return """
                    let page = try await http.getJSON(__Name__Page.self, from: settings.url.appendingPathComponent("items"), with: settings.json)
                    return SourcePage(cards: cards(page), total: page.items.elements.count, skipped: page.items.skipped)
            """
        case .page:
            return """
                    let number = cursor.flatMap(Int.init) ?? 1
                    let url = settings.url.appendingPathComponent("items")
                        .appending(queryItems: [URLQueryItem(name: "page", value: "\\(number)")])
                    let page = try await http.getJSON(__Name__Page.self, from: url, with: settings.json)
                    return SourcePage(cards: cards(page), next: page.page < page.total_pages ? "\\(page.page + 1)" : nil,
                                      skipped: page.items.skipped)
            """
        case .offset:
            return """
                    let offset = cursor.flatMap(Int.init) ?? 0
                    let url = settings.url.appendingPathComponent("items").appending(queryItems: [
                        URLQueryItem(name: "offset", value: "\\(offset)"), URLQueryItem(name: "limit", value: "\\(Self.limit)"),
                    ])
                    let page = try await http.getJSON(__Name__Page.self, from: url, with: settings.json)
                    let read = page.items.elements.count + page.items.skipped.count
                    let next = offset + read
                    return SourcePage(cards: cards(page), next: read > 0 && next < page.total ? "\\(next)" : nil,
                                      total: page.total, skipped: page.items.skipped)
            """
        case .cursor:
            return """
                    var url = settings.url.appendingPathComponent("items")
                    if let cursor { url = url.appending(queryItems: [URLQueryItem(name: "cursor", value: cursor)]) }
                    let page = try await http.getJSON(__Name__Page.self, from: url, with: settings.json)
                    let next = page.next_cursor.flatMap { $0.isEmpty ? nil : $0 }
                    return SourcePage(cards: cards(page), next: next, skipped: page.items.skipped)
            """
        }
    }

    /// The fixture route's answer for `GET /items`, paging `items` like the upstream.
    var fixtureAnswer: String {
        switch self {
        case .none:
            return """
                    return .json(JSONValue.object(["items": .array(items)]))
            """
        case .page:
            return """
                    guard let number = Int(request.query["page"] ?? "1"), number >= 1 else {
                        return .json(JSONValue.object(["error": "page must be a number from 1"]), status: 400)
                    }
                    let pages = (items.count + Self.size - 1) / Self.size
                    let slice = number <= pages ? Array(items.dropFirst((number - 1) * Self.size).prefix(Self.size)) : []
                    return .json(JSONValue.object([
                        "items": .array(slice), "page": .number(Decimal(number)), "total_pages": .number(Decimal(pages)),
                    ]))
            """
        case .offset:
            return """
                    guard let offset = Int(request.query["offset"] ?? "0"), offset >= 0,
                          let limit = Int(request.query["limit"] ?? "\\(Self.size)"), (1...100).contains(limit) else {
                        return .json(JSONValue.object(["error": "offset must be 0 or more, limit 1 to 100"]), status: 400)
                    }
                    return .json(JSONValue.object([
                        "items": .array(Array(items.dropFirst(offset).prefix(limit))), "total": .number(Decimal(items.count)),
                    ]))
            """
        case .cursor:
            return """
                    var start = 0
                    if let cursor = request.query["cursor"] {
                        guard cursor.hasPrefix("after-"), let index = Int(cursor.dropFirst("after-".count)),
                              (0...items.count).contains(index) else {
                            return .json(JSONValue.object(["error": "unknown cursor"]), status: 400)
                        }
                        start = index
                    }
                    let end = min(start + Self.size, items.count)
                    return .json(JSONValue.object([
                        "items": .array(Array(items[start..<end])),
                        "next_cursor": end < items.count ? .string("after-\\(end)") : .null,
                    ]))
            """
        }
    }
}
