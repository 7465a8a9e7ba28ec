import FeedCore
import FeedState
import Foundation
import PostgresNIO

/// Search over `card_search`: per card its words (title, then the rest, a position apart
/// so that no phrase spans the two) and its title as `tsvector`s of ``SearchText`` tokens
/// written with their positions, so that PostgreSQL's parser decides nothing and a search
/// finds what SQLite's finds.
extension PostgresCardStore: CardSearchIndex {
    public func searching(as person: Int) -> any CardSearchIndex {
        PostgresCardStore(database, person: person)
    }

    /// A `tsvector` literal of `columns`' tokens, each column's positions after the last
    /// one's plus a gap. Tokens are letters and digits: quoting them needs no escape.
    static func vector(_ columns: [[String]]) -> String {
        var positions: [String: [Int]] = [:]
        var next = 1
        for tokens in columns {
            for token in tokens {
                // PostgreSQL keeps positions up to 16,383.
                if next <= 16_383 { positions[token, default: []].append(next) }
                next += 1
            }
            next += 1
        }
        return positions.keys.sorted().map { "'\($0)':" + positions[$0, default: []].map(String.init).joined(separator: ",") }.joined(separator: " ")
    }

    /// A `tsquery` literal: every term (a phrase of tokens each) together, or `any` of them.
    static func query(_ terms: [[String]], any: Bool = false) -> String {
        terms.map { "(" + $0.map { "'\($0)'" }.joined(separator: " <-> ") + ")" }.joined(separator: any ? " | " : " & ")
    }

    /// Writes (or rewrites) the search rows of `cards`.
    static func indexForSearch(_ cards: [Card], firstSeen: [Date], on connection: PostgresConnection) async throws {
        guard !cards.isEmpty else { return }
        let documents = cards.map(CardSearch.document(of:))
        let words = documents.map { vector([$0.title, $0.body]) }
        let titles = documents.map { vector([$0.title]) }
        // An array of PostgreSQL holds no Swift optional: a price, and whether there is one.
        let micros = cards.map { card in card.price.flatMap { PriceMicros.micros($0.amount) } }
        let prices = micros.map { $0 ?? 0 }
        let priced = micros.map { $0 != nil }
        let newest = zip(cards, firstSeen).map { ($0.published ?? $1).timeIntervalSince1970 }
        _ = try await PostgresStateDatabase.rows("""
            INSERT INTO card_search (user_id, id, words, title, kind, price_micros, newest)
            SELECT \(StoreUser.default), id, words::tsvector, title::tsvector, kind, CASE WHEN priced THEN price END, newest
            FROM unnest(\(cards.map(\.id))::text[], \(words)::text[], \(titles)::text[], \(cards.map(\.kind.rawValue))::text[],
                        \(prices)::bigint[], \(priced)::boolean[], \(newest)::double precision[]) AS t(id, words, title, kind, price, priced, newest)
            ON CONFLICT (user_id, id) DO UPDATE SET words = excluded.words, title = excluded.title, kind = excluded.kind,
              price_micros = excluded.price_micros, newest = excluded.newest
            """, on: connection)
    }

    /// The search rows of every card kept (the migration that adds search).
    static func indexEveryCard(on connection: PostgresConnection) async throws {
        var cards: [Card] = []
        var firstSeen: [Date] = []
        for row in try await PostgresStateDatabase.rows("SELECT card, first_seen FROM card", on: connection) {
            let (json, seen) = try row.decode((Data, Double).self)
            guard let card = StoredCardForm.card(json) else { continue }
            cards.append(card)
            firstSeen.append(Date(timeIntervalSince1970: seen))
            if cards.count == 1000 {
                try await indexForSearch(cards, firstSeen: firstSeen, on: connection)
                cards = []
                firstSeen = []
            }
        }
        try await indexForSearch(cards, firstSeen: firstSeen, on: connection)
    }

    /// Writes the search rows of the cards recorded since it last ran, 5,000 a transaction,
    /// each card read back and decoded at its turn. Two processes at once each take rows the
    /// other has not locked (`SKIP LOCKED`).
    public func updateSearch() async throws -> Int {
        // Most calls find nothing to do (every search asks first, `serve` each second): one
        // small read on the shared connection, not a transaction on a connection of its own.
        guard try await migrated().query("SELECT EXISTS (SELECT 1 FROM card_unsearched)").first?.decode(Bool.self) == true else { return 0 }
        var indexed = 0
        while true {
            let done = try await migrated().withTransaction { connection in
                let rows = try await PostgresStateDatabase.rows("""
                    SELECT card.id, card.card, card.first_seen FROM card_unsearched pending
                    JOIN card ON card.user_id = \(StoreUser.default) AND card.id = pending.id
                    ORDER BY pending.id LIMIT 5000 FOR UPDATE OF pending SKIP LOCKED
                    """, on: connection)
                var ids: [String] = []
                var cards: [Card] = []
                var firstSeen: [Date] = []
                for row in rows {
                    let (id, json, seen) = try row.decode((String, Data, Double).self)
                    ids.append(id)
                    guard let card = StoredCardForm.card(json) else { continue }
                    cards.append(card)
                    firstSeen.append(Date(timeIntervalSince1970: seen))
                }
                try await Self.indexForSearch(cards, firstSeen: firstSeen, on: connection)
                try await Self.writeItemKeys(of: cards, replacing: ids, on: connection)
                // Ids whose card is gone (a purge between) are dropped too.
                _ = try await PostgresStateDatabase.rows("""
                    DELETE FROM card_unsearched WHERE id = ANY(\(ids)::text[])
                       OR NOT EXISTS (SELECT 1 FROM card WHERE card.user_id = \(StoreUser.default) AND card.id = card_unsearched.id)
                    """, on: connection)
                return ids.count
            }
            indexed += done
            guard done == 5000 else {
                // As after a large recording (``PostgresCardStore/analyzeAfter``).
                if indexed >= Self.analyzeAfter { _ = try await database.query("ANALYZE card_search") }
                return indexed
            }
        }
    }

    public func search(_ search: CardSearch, offset: Int, limit: Int) async throws -> StoredPage {
        // Every card recorded before the search is found.
        _ = try await updateSearch()
        var conditions = ["found.user_id = $1"]
        var bindings = PostgresBindings()
        bindings.append(StoreUser.default)
        func bind(_ value: some PostgresEncodable & Sendable) throws -> String {
            try bindings.append(value)
            return "$\(bindings.count)"
        }
        // Ranked first: the cards whose title holds every term (all do when none is asked for).
        var inTitle = ""
        if !search.required.isEmpty {
            let wanted = try bind(Self.query(search.required))
            conditions.append("found.words @@ \(wanted)::tsquery")
            inTitle = "found.title @@ \(wanted)::tsquery DESC, "
        }
        if !search.excluded.isEmpty {
            conditions.append("NOT found.words @@ \(try bind(Self.query(search.excluded, any: true)))::tsquery")
        }
        if !search.sources.isEmpty { conditions.append("card.source = ANY(\(try bind(search.sources))::text[])") }
        // The cards' own rows are read only for their sources: a card's search row is
        // removed with the card, in one transaction, so every row names a kept card. At a
        // million cards, a search of 2,693 matches read 5,151 pages with the join, where
        // the search rows alone are 2,654.
        let from = search.sources.isEmpty ? "card_search found"
            : "card JOIN card_search found ON found.user_id = card.user_id AND found.id = card.id"
        if !search.kinds.isEmpty { conditions.append("found.kind = ANY(\(try bind(search.kinds.map(\.rawValue)))::text[])") }
        for bound in search.prices {
            guard let micros = PriceMicros.micros(bound.amount) else { return StoredPage(cards: [], total: 0) }
            conditions.append("found.price_micros \(bound.comparison.rawValue) \(try bind(micros))")
        }
        let ids = try await migrated().query(PostgresQuery(unsafeSQL: """
            SELECT found.id FROM \(from)
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY \(inTitle)greatest(0, least(floor(found.newest), \(CardSearch.latestSecond))) DESC, found.id COLLATE "C"
            """, binds: bindings)).map { try $0.decode(String.self) }
        let start = min(max(offset, 0), ids.count)
        let page = Array(ids[start...].prefix(max(limit, 0)))
        guard !page.isEmpty else { return StoredPage(cards: [], total: ids.count) }
        let kept = try await migrated().query("""
            \(unescaped: Self.selectKept(person)) WHERE card.user_id = \(StoreUser.default) AND card.id = ANY(\(page)::text[])
            """).map(Self.kept)
        let byID = Dictionary(kept.map { ($0.card.id, $0) }, uniquingKeysWith: { first, _ in first })
        return StoredPage(cards: page.compactMap { byID[$0] }, total: ids.count)
    }
}
