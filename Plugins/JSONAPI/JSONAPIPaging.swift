import FeedCore
import FeedSupport
import Foundation

/// How a `plugin: json` source walks its pages (`paging:`). The cursor the engine keeps
/// is the page number, the offset, the upstream's cursor, or the next page's URL.
enum JSONAPIPaging: Sendable {
    /// One page (no `paging:`).
    case single
    case page(param: String, start: Int, sizeParam: String?, size: Int?, totalPages: JSONPath?)
    case offset(offsetParam: String, limitParam: String, limit: Int?, total: JSONPath?)
    case cursor(param: String, from: JSONPath)
    case nextURL(from: JSONPath)
    case linkHeader

    static let styles = ["page", "offset", "cursor", "next_url", "link_header"]

    static func read(_ map: ConfigMapReader?) -> JSONAPIPaging {
        guard let map else { return .single }
        let style = map.node("style") == nil
            ? { map.report("style", "is required: one of \(styles.joined(separator: ", "))"); return nil }()
            : map.choice("style", from: styles)
        func param(_ key: String, _ fallback: String) -> String { map.string(key) ?? fallback }
        switch style {
        case "page":
            map.rejectUnknownKeys(["style", "param", "start", "size_param", "size", "total_pages"])
            let sizeParam = map.string("size_param")
            let size = map.integer("size", minimum: 1, maximum: 100_000)
            if (sizeParam == nil) != (size == nil) {
                map.report(sizeParam == nil ? "size" : "size_param", "size_param and size go together: the parameter and the page size to send")
            }
            return .page(param: param("param", "page"), start: map.integer("start", minimum: 0, maximum: 1_000_000) ?? 1,
                         sizeParam: sizeParam, size: size, totalPages: JSONAPIOptions.path(map, "total_pages"))
        case "offset":
            map.rejectUnknownKeys(["style", "offset_param", "limit_param", "limit", "total"])
            return .offset(offsetParam: param("offset_param", "offset"), limitParam: param("limit_param", "limit"),
                           limit: map.integer("limit", minimum: 1, maximum: 100_000), total: JSONAPIOptions.path(map, "total"))
        case "cursor":
            map.rejectUnknownKeys(["style", "param", "from"])
            let name = map.string("param", required: true)
            let from = map.node("from") == nil
                ? { map.report("from", "is required: the path of the next cursor in a page body"); return nil }()
                : JSONAPIOptions.path(map, "from")
            guard let name, let from else { return .single }
            return .cursor(param: name, from: from)
        case "next_url":
            map.rejectUnknownKeys(["style", "from"])
            let from = map.node("from") == nil
                ? { map.report("from", "is required: the path of the next page's URL in a page body"); return nil }()
                : JSONAPIOptions.path(map, "from")
            return from.map { .nextURL(from: $0) } ?? .single
        case "link_header":
            map.rejectUnknownKeys(["style"])
            return .linkHeader
        default:
            return .single
        }
    }

    /// The URL of the page at `cursor` (nil = the first page).
    func url(base: URL, cursor: String?) -> URL {
        switch self {
        case .single:
            return base
        case .page(let param, let start, let sizeParam, let size, _):
            var items = [URLQueryItem(name: param, value: cursor ?? "\(start)")]
            if let sizeParam, let size { items.append(URLQueryItem(name: sizeParam, value: "\(size)")) }
            return Self.setting(items, in: base)
        case .offset(let offsetParam, let limitParam, let limit, _):
            var items = [URLQueryItem(name: offsetParam, value: cursor ?? "0")]
            if let limit { items.append(URLQueryItem(name: limitParam, value: "\(limit)")) }
            return Self.setting(items, in: base)
        case .cursor(let param, _):
            return cursor.map { Self.setting([URLQueryItem(name: param, value: $0)], in: base) } ?? base
        case .nextURL, .linkHeader:
            return cursor.flatMap(URL.init(string:)) ?? base
        }
    }

    /// The cursor of the page after the one at `cursor`, which had `count` records;
    /// nil at the end. Throws when the upstream points at another host.
    func next(after cursor: String?, count: Int, body: JSONValue, response: HTTPResponse) throws -> String? {
        guard count > 0 else { return nil }
        switch self {
        case .single:
            return nil
        // A stated total decides; a page shorter than asked ends the walk only when the
        // upstream states none (APIs cap their pages below what `size`/`limit` asks).
        case .page(_, let start, _, let size, let totalPages):
            let current = cursor.flatMap(Int.init) ?? start
            if let total = totalPages.flatMap({ Self.integer($0.value(in: body)) }) {
                return current - start + 1 >= total ? nil : "\(current + 1)"
            }
            if let size, count < size { return nil }
            return "\(current + 1)"
        case .offset(_, _, let limit, let total):
            let next = (cursor.flatMap(Int.init) ?? 0) + count
            if let total = total.flatMap({ Self.integer($0.value(in: body)) }) {
                return next >= total ? nil : "\(next)"
            }
            if let limit, count < limit { return nil }
            return "\(next)"
        case .cursor(_, let from):
            guard let next = from.value(in: body)?.scalarText, !next.isEmpty else { return nil }
            return next
        case .nextURL(let from):
            guard let link = from.value(in: body)?.scalarText, !link.isEmpty else { return nil }
            return try Self.sameHost(link, relativeTo: response.url)
        case .linkHeader:
            guard let link = response.headers["link"].flatMap(LinkHeader.next) else { return nil }
            return try Self.sameHost(link, relativeTo: response.url)
        }
    }

    static func integer(_ value: JSONValue?) -> Int? {
        value?.scalarText.flatMap { Int($0) ?? Double($0).flatMap { $0.isFinite ? Int(exactly: $0.rounded(.up)) : nil } }
    }

    /// `link` resolved against the page it came from; only the same scheme, host and port
    /// are followed, so a hostile body cannot send the source's headers elsewhere.
    static func sameHost(_ link: String, relativeTo page: URL) throws -> String {
        guard let url = URL(string: link, relativeTo: page)?.absoluteURL,
              url.scheme?.lowercased() == page.scheme?.lowercased(),
              url.host?.lowercased() == page.host?.lowercased(), effectivePort(url) == effectivePort(page)
        else {
            throw SourceError.failed("the next page is on another host (\(Redaction.url(link))); only \(page.host ?? "the same host") is followed")
        }
        return url.absoluteString
    }

    /// `https://a.example` and `https://a.example:443` are one origin.
    static func effectivePort(_ url: URL) -> Int? {
        url.port ?? ["http": 80, "https": 443][url.scheme?.lowercased() ?? ""]
    }

    /// `base` with `items` set (replacing parameters of the same name).
    static func setting(_ items: [URLQueryItem], in base: URL) -> URL {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return base }
        let names = Set(items.map(\.name))
        components.queryItems = (components.queryItems ?? []).filter { !names.contains($0.name) } + items
        return components.url ?? base
    }
}

/// RFC 8288 `Link` headers.
enum LinkHeader {
    /// The target of the first link with `rel="next"` (rel may list several types). Targets
    /// are read between `<` and `>`, so a comma inside a URL does not split a link.
    static func next(_ header: String) -> String? {
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = rest[rest.index(after: open)..<close]
            let afterTarget = rest[rest.index(after: close)...]
            let parametersEnd = afterTarget.firstIndex(of: "<") ?? afterTarget.endIndex
            let isNext = afterTarget[..<parametersEnd].split(separator: ";").contains { parameter in
                let pair = parameter.split(separator: "=", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: ",")))
                }
                guard pair.count == 2, pair[0].lowercased() == "rel" else { return false }
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
                    .split(separator: " ").contains("next")
            }
            if isNext { return String(target) }
            rest = afterTarget[parametersEnd...]
        }
        return nil
    }
}
