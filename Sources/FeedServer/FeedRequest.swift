import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine
import Foundation
import Hummingbird

/// The query string of a feed route, read the way the command line reads its flags:
/// `source` (repeatable), `kind`, `q`, `sort`, `order`, `page`, `per_page`.
enum FeedRequest {
    static let parameters = ["source", "kind", "q", "sort", "order", "page", "per_page"]

    /// `emptyIsAbsent`: the reader's form sends `source=` for "all sources".
    static func query(_ request: Request, config: FeedConfig, emptyIsAbsent: Bool = false) throws(ProblemError) -> FeedQuery {
        try query(pairs: request.uri.queryParameters.map { (String($0.key), String($0.value)) }.filter { !emptyIsAbsent || !$0.1.isEmpty },
                  config: config)
    }

    /// A query string without its `token=` (a sign-in, not a filter): what a feed names as
    /// its own address and what its kept response is keyed by, so no token is ever written
    /// into a feed.
    static func withoutToken(_ query: String?) -> String? {
        guard let query, query.contains("token=") else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).filter { !$0.hasPrefix("token=") }.joined(separator: "&")
    }

    /// The query of parameter `pairs` (as the request gave them).
    static func query(pairs: [(String, String)], config: FeedConfig) throws(ProblemError) -> FeedQuery {
        let pairs = pairs.filter { $0.0 != "token" }
        for (name, _) in pairs where !Self.parameters.contains(name) {
            throw ProblemError(problem: .badParameter(name, "unknown parameter (known: \(Self.parameters.joined(separator: ", ")))"))
        }
        let parameters = FormFields(pairs: pairs)
        let sources = parameters.getAll("source")
        for id in sources where config.source(id: id) == nil {
            throw ProblemError(problem: .badParameter("source", "unknown source \"\(id)\" (known: \(config.sources.map(\.id).joined(separator: ", ")))"))
        }
        func choice<T: RawRepresentable>(_ name: String, _ type: T.Type, _ all: [T]) throws(ProblemError) -> T? where T.RawValue == String {
            guard let text = parameters.get(name) else { return nil }
            guard let value = T(rawValue: text) else {
                throw ProblemError(problem: .badParameter(name, "\"\(text)\" is not one of \(all.map(\.rawValue).joined(separator: ", "))"))
            }
            return value
        }
        func number(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(ProblemError) -> Int {
            guard let text = parameters.get(name) else { return fallback }
            guard let value = Int(text), range.contains(value) else {
                throw ProblemError(problem: .badParameter(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\""))
            }
            return value
        }
        return FeedQuery(
            sourceIDs: sources, sort: try choice("sort", SortKey.self, SortKey.allCases) ?? .feed,
            order: try choice("order", SortDirection.self, SortDirection.allCases),
            page: try number("page", default: 1, in: 1...FeedQuery.maxPage),
            perPage: try number("per_page", default: 20, in: 1...FeedQuery.maxPerPage),
            kind: try choice("kind", Card.Kind.self, Card.Kind.allCases),
            text: parameters.get("q"))
    }
}
