import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation
import PostgresNIO

/// The ``CardStore`` in a shared PostgreSQL database: the same tables and rules as the
/// SQLite store, so a replica reads what the refresh lease's holder recorded. A listing's
/// rows go in with one statement each (arrays unnested), not one round trip per card.
public struct PostgresCardStore: CardStore {
    let database: PostgresStateDatabase
    /// Whose marks it reads and writes (``StoreUser``).
    let person: Int

    public init(_ database: PostgresStateDatabase, person: Int = StoreUser.default) {
        self.database = database
        self.person = person
    }

    public func reading(as person: Int) -> any CardStore {
        PostgresCardStore(database, person: person)
    }

    static let schema = PostgresSchema(component: "cards", migrations: [
        .init("1: card store", [
            """
            CREATE TABLE card (
              user_id integer NOT NULL, id text NOT NULL, source text NOT NULL, position integer NOT NULL,
              card bytea NOT NULL, fingerprint text NOT NULL, tracked text NOT NULL,
              first_seen double precision NOT NULL, last_seen double precision NOT NULL, gone_since double precision,
              PRIMARY KEY (user_id, id))
            """,
            "CREATE INDEX card_by_source ON card (user_id, source, position)",
            """
            CREATE TABLE card_change (
              seq bigserial PRIMARY KEY, user_id integer NOT NULL, id text NOT NULL, at double precision NOT NULL,
              field text NOT NULL, before text NOT NULL, after text NOT NULL)
            """,
            "CREATE INDEX card_change_by_card ON card_change (user_id, id, at)",
            "CREATE TABLE card_source_version (source text PRIMARY KEY, version bigint NOT NULL)",
        ]),
        // What each source's last complete listing was read from (LiveListing.tag).
        .init("2: listing tags", ["ALTER TABLE card_source_version ADD COLUMN listing_tag text"]),
        // A person's marks beside the cards (see SQLiteCardStore's "v4: reading marks").
        .init("3: reading marks", [
            """
            CREATE TABLE card_reading (
              user_id integer NOT NULL, id text NOT NULL, read_at double precision, starred_at double precision,
              PRIMARY KEY (user_id, id))
            """,
        ]),
        .init("4: search", [
            """
            CREATE TABLE card_search (
              user_id integer NOT NULL, id text NOT NULL, words tsvector NOT NULL, title tsvector NOT NULL, kind text NOT NULL,
              price_micros bigint, newest double precision NOT NULL, PRIMARY KEY (user_id, id))
            """,
            "CREATE INDEX card_search_words ON card_search USING gin (words)",
        ], then: { connection in try await PostgresCardStore.indexEveryCard(on: connection) }),
        // Marks per person: a card's marks found by its id (retention keeps what anyone starred).
        .init("5: marks per person", ["CREATE INDEX card_reading_by_card ON card_reading (id)"]),
        // Each card's number (CardNumber), for the Google Reader API's item ids: the first
        // 63 bits of the SHA-256 of its id, as Swift computes it.
        .init("6: card numbers", [
            "ALTER TABLE card ADD COLUMN number bigint",
            "UPDATE card SET number = ('x' || substr(encode(sha256(convert_to(id, 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint & 9223372036854775807",
            "CREATE INDEX card_by_number ON card (number)",
        ]),
        // Each person's marks' change counter (see SQLiteCardStore's "v10: marks versions").
        .init("7: marks versions", ["CREATE TABLE card_marks_version (user_id integer PRIMARY KEY, version bigint NOT NULL)"]),
        // What a page is ordered by, beside each card, and an index for each order (as
        // SQLite's "v2: pages from indexes"): its rank in its source (feed order), its price
        // in millionths, its date; and each source's card count. A page then reads the rows
        // up to it from an index, not every card of the sources sorted.
        .init("8: pages from indexes", [
            """
            ALTER TABLE card ADD COLUMN rank integer NOT NULL DEFAULT 0, ADD COLUMN price_key bigint,
              ADD COLUMN price_inexact boolean NOT NULL DEFAULT false, ADD COLUMN published double precision
            """,
            "ALTER TABLE card_source_version ADD COLUMN cards integer NOT NULL DEFAULT 0",
            "DROP INDEX card_by_source",
            "CREATE INDEX card_by_source ON card (user_id, source, rank)",
            "CREATE INDEX card_by_rank ON card (user_id, rank, source)",
            "CREATE INDEX card_by_price ON card (user_id, price_key, rank, source) WHERE price_key IS NOT NULL",
            "CREATE INDEX card_by_date ON card (user_id, published, rank, source) WHERE published IS NOT NULL",
            "CREATE INDEX card_inexact_price ON card (user_id) WHERE price_inexact",
        ], then: { connection in try await PostgresCardStore.keyEveryCard(on: connection) }),
        // Each person's read cards per source, kept by statement triggers on the marks (as
        // SQLite's `card_read_count`): unread counts are a source's cards less these, read
        // from two small tables, where counting them read every card (0.45 s a reader page
        // at 200,000 cards).
        .init("9: read counts", [
            "CREATE TABLE card_read_count (user_id integer NOT NULL, source text NOT NULL, read bigint NOT NULL, PRIMARY KEY (user_id, source))",
            """
            INSERT INTO card_read_count (user_id, source, read)
            SELECT r.user_id, card.source, count(*) FROM card_reading r JOIN card ON card.user_id = \(StoreUser.default) AND card.id = r.id
            WHERE r.read_at IS NOT NULL GROUP BY r.user_id, card.source
            """,
            // One function for the three statement triggers, each with its transition tables
            // (a trigger may have them for one event only); PL/pgSQL plans a branch's
            // statement when it first runs it, so each event reads only its own tables.
            """
            CREATE FUNCTION card_read_count_moved() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF TG_OP = 'INSERT' THEN
                INSERT INTO card_read_count AS counted (user_id, source, read)
                SELECT moved.user_id, card.source, sum(moved.delta) FROM (SELECT user_id, id, 1 AS delta FROM new_marks WHERE read_at IS NOT NULL) AS moved
                  JOIN card ON card.user_id = \(StoreUser.default) AND card.id = moved.id
                GROUP BY moved.user_id, card.source HAVING sum(moved.delta) <> 0
                ON CONFLICT (user_id, source) DO UPDATE SET read = counted.read + excluded.read;
              ELSIF TG_OP = 'DELETE' THEN
                INSERT INTO card_read_count AS counted (user_id, source, read)
                SELECT moved.user_id, card.source, sum(moved.delta) FROM (SELECT user_id, id, -1 AS delta FROM old_marks WHERE read_at IS NOT NULL) AS moved
                  JOIN card ON card.user_id = \(StoreUser.default) AND card.id = moved.id
                GROUP BY moved.user_id, card.source HAVING sum(moved.delta) <> 0
                ON CONFLICT (user_id, source) DO UPDATE SET read = counted.read + excluded.read;
              ELSE
                INSERT INTO card_read_count AS counted (user_id, source, read)
                SELECT moved.user_id, card.source, sum(moved.delta) FROM (SELECT n.user_id, n.id, (n.read_at IS NOT NULL)::integer - (o.read_at IS NOT NULL)::integer AS delta
                  FROM new_marks n JOIN old_marks o ON o.user_id = n.user_id AND o.id = n.id) AS moved
                  JOIN card ON card.user_id = \(StoreUser.default) AND card.id = moved.id
                GROUP BY moved.user_id, card.source HAVING sum(moved.delta) <> 0
                ON CONFLICT (user_id, source) DO UPDATE SET read = counted.read + excluded.read;
              END IF;
              RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER card_read_marked AFTER INSERT ON card_reading REFERENCING NEW TABLE AS new_marks
            FOR EACH STATEMENT EXECUTE FUNCTION card_read_count_moved()
            """,
            """
            CREATE TRIGGER card_read_changed AFTER UPDATE ON card_reading REFERENCING OLD TABLE AS old_marks NEW TABLE AS new_marks
            FOR EACH STATEMENT EXECUTE FUNCTION card_read_count_moved()
            """,
            """
            CREATE TRIGGER card_read_unmarked AFTER DELETE ON card_reading REFERENCING OLD TABLE AS old_marks
            FOR EACH STATEMENT EXECUTE FUNCTION card_read_count_moved()
            """,
        ]),
        // When each source was last listed whole (see lastSeen).
        .init("10: listing times", ["ALTER TABLE card_source_version ADD COLUMN listed_at double precision"]),
        // Cards recorded whose search rows are not written yet (``updateSearch()``): a
        // recording lists them, and the first search after it, or `serve` in the background,
        // writes their rows (as SQLite's "v11").
        .init("11: search rows written apart from recording", ["CREATE TABLE card_unsearched (id text PRIMARY KEY)"]),
        // `published` is the card's date as pages order it: when it was published, else
        // when it was first seen (CardSortKeys.date; as SQLite's "v12").
        .init("12: undated cards by first seen", ["UPDATE card SET published = first_seen WHERE published IS NULL"]),
        // Cards numbered 1, 2, 3… in the order first seen, from a sequence (see SQLite's
        // "v13"): the hash of migration 6 could not tell an app what is new.
        .init("13: cards numbered in the order first seen", [
            "CREATE SEQUENCE card_number",
            """
            UPDATE card SET number = numbered.n FROM (
              SELECT user_id, id, row_number() OVER (ORDER BY first_seen, source, rank, id) AS n FROM card) AS numbered
            WHERE card.user_id = numbered.user_id AND card.id = numbered.id
            """,
            "SELECT setval('card_number', coalesce((SELECT max(number) FROM card), 0) + 1, false)",
            "DROP INDEX card_by_number",
            "CREATE UNIQUE INDEX card_by_number ON card (number)",
        ]),
        // ItemDecisionStore: a person's word on which cards are one item (SQLite's "v14").
        .init("14: item decisions", [
            """
            CREATE TABLE item_decision (first text NOT NULL, second text NOT NULL, same boolean NOT NULL,
              decided_at double precision NOT NULL, PRIMARY KEY (first, second))
            """,
        ]),
        // Each card's title as pages order it (CardSortKeys.title), compared as bytes (as
        // SQLite's "v15"): a page by title decoded every kept card. No index: it cost every
        // first recording 5%.
        .init("15: pages by title", [#"ALTER TABLE card ADD COLUMN title_key text COLLATE "C" NOT NULL DEFAULT ''"#],
              then: { connection in try await PostgresCardStore.keyEveryTitle(on: connection) }),
        // Each card's same-item keys (ItemKeys), written with its search row (as SQLite's "v16").
        .init("16: same-item keys", [
            "CREATE TABLE card_item_key (key bigint NOT NULL, id text NOT NULL, PRIMARY KEY (key, id))",
            "CREATE INDEX card_item_key_by_id ON card_item_key (id)",
            "ALTER TABLE card ADD COLUMN has_copies boolean NOT NULL DEFAULT false",
        ], then: { connection in try await PostgresCardStore.keyEveryItem(on: connection) }),
    ])

    /// The rows ``kept(_:)`` reads: the cards with `person`'s marks (an integer, never
    /// text from outside).
    static func selectKept(_ person: Int) -> String {
        """
        SELECT card.card, card.position, card.first_seen, \(lastSeen), card.gone_since, reading.read_at, reading.starred_at, card.number
        FROM card LEFT JOIN card_reading reading ON reading.user_id = \(person) AND reading.id = card.id
        """
    }

    /// A card's last-seen time: a complete listing moves its source's `listed_at`, not each
    /// card's `last_seen` (every card it does not mark gone is in it), so a listed card was
    /// last seen at the later of the two; a card marked gone takes the listing time into its
    /// own row first (as SQLite's `lastSeenValue`).
    static let lastSeen = """
        CASE WHEN card.gone_since IS NULL THEN greatest(card.last_seen, coalesce(
          (SELECT listed_at FROM card_source_version v WHERE v.source = card.source), 0)) ELSE card.last_seen END
        """
    /// A card someone starred (over `card`): kept by every purge.
    static let isStarred = """
        EXISTS (SELECT 1 FROM card_reading starred WHERE starred.id = card.id AND starred.starred_at IS NOT NULL)
        """

    /// The database, with this store's tables made or brought up to date.
    func migrated() async throws -> PostgresStateDatabase {
        try await database.migrate(Self.schema)
        return database
    }

    /// Cards written by one recording past which the planner's statistics are brought up
    /// to date at once (`ANALYZE`), as after any bulk load: autovacuum does it within a
    /// minute or so, and until then a first import's pages were planned on an empty table
    /// (seconds for a page that takes milliseconds).
    static let analyzeAfter = 10_000

    public func record(_ listings: [LiveListing]) async throws {
        guard !listings.isEmpty else { return }
        let written = try await migrated().withTransaction { connection in
            try await Self.record(listings, on: connection)
        }
        if written >= Self.analyzeAfter { _ = try await database.query("ANALYZE card") }
    }

    /// Records `listings` in the transaction on `connection`; the number of cards written.
    /// Recordings take turns (an advisory lock until the transaction ends), as SQLite's one
    /// writer does: each listing locks its source's rows, and two processes recording the
    /// same sources, each in the order its sources ended, failed with "deadlock detected";
    /// the order is kept, since cards are numbered in the order first seen.
    private static func record(_ listings: [LiveListing], on connection: PostgresConnection) async throws -> Int {
        let user = StoreUser.default
        var written = 0
        _ = try await PostgresStateDatabase.rows("SELECT pg_advisory_xact_lock(\(PostgresSchema.recordingLock))", on: connection)
        for listing in listings {
            if listing.unchanged || listing.complete && listing.tag != nil {
                // The listing the store merged last (confirmed by its upstream, or read again
                // from the same bytes): its cards are seen again — its source's listing time
                // moves — and none of them is encoded, compared or written.
                let stored = try await PostgresStateDatabase.rows("""
                    SELECT listing_tag FROM card_source_version WHERE source = \(listing.source) FOR UPDATE
                    """, on: connection).first?.decode(String?.self)
                if let tag = stored ?? nil, tag == listing.tag {
                    _ = try await PostgresStateDatabase.rows("""
                        UPDATE card_source_version SET listed_at = greatest(coalesce(listed_at, 0), \(listing.at.timeIntervalSince1970))
                        WHERE source = \(listing.source)
                        """, on: connection)
                    continue
                }
                if listing.unchanged { continue }
            }
            var known: [String: ListingMerge.Known] = [:]
            // A complete listing needs every card of the source (what it lacks is gone);
            // a partial one only the cards it lists.
            let rows = listing.complete
                ? try await PostgresStateDatabase.rows("""
                    SELECT id, first_seen, gone_since, position, tracked, fingerprint FROM card WHERE user_id = \(user) AND source = \(listing.source)
                    FOR UPDATE
                    """, on: connection)
                : try await PostgresStateDatabase.rows("""
                    SELECT id, first_seen, gone_since, position, tracked, fingerprint FROM card WHERE user_id = \(user) AND id = ANY(\(listing.cards.map(\.id))::text[])
                    FOR UPDATE
                    """, on: connection)
            for row in rows {
                let (id, firstSeen, goneSince, position, tracked, fingerprint) = try row.decode((String, Double, Double?, Int, String, String).self)
                known[id] = ListingMerge.Known(firstSeen: Date(timeIntervalSince1970: firstSeen),
                                               goneSince: goneSince.map(Date.init(timeIntervalSince1970:)), position: position,
                                               trackedText: tracked, fingerprint: fingerprint)
            }
            let merge = ListingMerge(listing: listing, known: known)
            let at = listing.at.timeIntervalSince1970
            let fresh = merge.firstRanks != nil
            let changed = merge.writes.filter(\.changed)
            if !changed.isEmpty {
                let cardsChanged = changed.map { listing.cards[$0.position] }
                let ids = cardsChanged.map(\.id)
                let keys = cardsChanged.map(CardSortKeys.init)
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO card (user_id, id, source, position, card, fingerprint, tracked, first_seen, last_seen, gone_since, number,
                                      rank, price_key, price_inexact, published, title_key)
                    SELECT \(user), id, \(listing.source), position, card, fingerprint, tracked, first_seen, \(at), NULL,
                           CASE WHEN is_new THEN nextval('card_number') END,
                           rank, CASE WHEN priced THEN price END, price_inexact, date, title
                    FROM unnest(\(ids)::text[], \(changed.map(\.position))::integer[], \(changed.map { ByteBuffer(bytes: $0.json) })::bytea[],
                                \(changed.map(\.fingerprint))::text[], \(cardsChanged.map { StoredCardForm.trackedText(of: $0) })::text[],
                                \(changed.map(\.firstSeen.timeIntervalSince1970))::double precision[], \(ids.map { known[$0] == nil })::boolean[],
                                \(changed.map { merge.firstRanks?[$0.position] ?? $0.position })::integer[], \(keys.map { $0.price ?? 0 })::bigint[],
                                \(keys.map { $0.price != nil })::boolean[], \(keys.map(\.priceInexact))::boolean[],
                                \(zip(keys, changed).map { $0.date(firstSeen: $1.firstSeen) })::double precision[], \(keys.map(\.title))::text[])
                         AS t(id, position, card, fingerprint, tracked, first_seen, is_new, rank, price, priced, price_inexact, date, title)
                    ON CONFLICT (user_id, id) DO UPDATE SET source = excluded.source, position = excluded.position,
                      card = excluded.card, fingerprint = excluded.fingerprint, tracked = excluded.tracked,
                      last_seen = excluded.last_seen, gone_since = NULL, price_key = excluded.price_key,
                      price_inexact = excluded.price_inexact, published = excluded.published, title_key = excluded.title_key
                    """, on: connection)
                // Their search rows are written apart (``updateSearch()``), off the run's path.
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO card_unsearched (id) SELECT unnest(\(ids)::text[]) ON CONFLICT DO NOTHING
                    """, on: connection)
                written += changed.count
            }
            // A complete listing moves its source's listed_at for every card it still has
            // (``lastSeen``); a partial one each card's own.
            let seen = merge.writes.filter { !$0.changed && !(listing.complete && $0.onlySeen) }
            if !seen.isEmpty {
                _ = try await PostgresStateDatabase.rows("""
                    UPDATE card SET position = t.position, last_seen = \(at), gone_since = NULL
                    FROM unnest(\(seen.map { listing.cards[$0.position].id })::text[], \(seen.map(\.position))::integer[]) AS t(id, position)
                    WHERE card.user_id = \(user) AND card.id = t.id
                    """, on: connection)
            }
            if !merge.gone.isEmpty {
                // A card now gone was last seen when its source was last listed.
                _ = try await PostgresStateDatabase.rows("""
                    UPDATE card SET gone_since = \(at),
                      last_seen = greatest(last_seen, coalesce((SELECT listed_at FROM card_source_version WHERE source = \(listing.source)), 0))
                    WHERE user_id = \(user) AND id = ANY(\(merge.gone)::text[])
                    """, on: connection)
            }
            if !merge.changes.isEmpty {
                let rows = merge.changes
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO card_change (user_id, id, at, field, before, after)
                    SELECT \(user), id, \(at), field, before, after
                    FROM unnest(\(rows.map(\.id))::text[], \(rows.map(\.field.rawValue))::text[],
                                \(rows.map { JSONLines.text(of: $0.before) })::text[], \(rows.map { JSONLines.text(of: $0.after) })::text[])
                         WITH ORDINALITY AS t(id, field, before, after, n)
                    ORDER BY n
                    """, on: connection)
            }
            if merge.movesVersion {
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO card_source_version (source, version, cards) VALUES (\(listing.source), 1, \(merge.writes.count))
                    ON CONFLICT (source) DO UPDATE SET version = card_source_version.version + 1,
                      cards = CASE WHEN \(fresh) THEN excluded.cards ELSE card_source_version.cards END
                    """, on: connection)
            }
            if !fresh, merge.movesVersion || merge.writes.contains(where: { !$0.onlySeen }) {
                try await Self.rerank(source: listing.source, on: connection)
            }
            _ = try await PostgresStateDatabase.rows("""
                UPDATE card_source_version SET listing_tag = \(listing.tagToKeep),
                  listed_at = CASE WHEN \(listing.complete) THEN greatest(coalesce(listed_at, 0), \(listing.at.timeIntervalSince1970)) ELSE listed_at END
                WHERE source = \(listing.source)
                """, on: connection)
        }
        return written
    }

    /// Numbers the cards of `source` 0, 1, 2… in the order ``cards(of:)`` gives them (listed
    /// in their listing's order, then gone) — the feed order's round — and counts them, as
    /// SQLite's `rerank` does. Only rows whose rank moves are written.
    static func rerank(source: String, on connection: PostgresConnection) async throws {
        let user = StoreUser.default
        _ = try await PostgresStateDatabase.rows("""
            UPDATE card SET rank = ranked.n FROM (
              SELECT id, (row_number() OVER (ORDER BY gone_since IS NOT NULL, position, id) - 1)::integer AS n
              FROM card WHERE user_id = \(user) AND source = \(source)) AS ranked
            WHERE card.user_id = \(user) AND card.id = ranked.id AND card.rank <> ranked.n
            """, on: connection)
        _ = try await PostgresStateDatabase.rows("""
            UPDATE card_source_version SET cards = (SELECT count(*) FROM card WHERE user_id = \(user) AND source = \(source))
            WHERE source = \(source)
            """, on: connection)
    }

    /// Every kept card that reads, 2,000 at a time by id, each batch handed to `body`
    /// (a migration that writes what only Swift reads from a card's JSON).
    static func everyKeptCard(on connection: PostgresConnection, _ body: ([Card]) async throws -> Void) async throws {
        var after = ""
        while true {
            let rows = try await PostgresStateDatabase.rows("""
                SELECT id, card FROM card WHERE user_id = \(StoreUser.default) AND id > \(after) ORDER BY id LIMIT 2000
                """, on: connection)
            guard !rows.isEmpty else { break }
            var cards: [Card] = []
            for row in rows {
                let (id, json) = try row.decode((String, Data).self)
                after = id
                if let card = StoredCardForm.card(json) { cards.append(card) }
            }
            try await body(cards)
        }
    }

    /// Migration 15: every kept card's title key.
    static func keyEveryTitle(on connection: PostgresConnection) async throws {
        try await everyKeptCard(on: connection) { cards in
            let ids = cards.map(\.id)
            let titles = cards.map { CardSortKeys($0).title }
            _ = try await PostgresStateDatabase.rows("""
                UPDATE card SET title_key = t.title FROM unnest(\(ids)::text[], \(titles)::text[]) AS t(id, title)
                WHERE card.user_id = \(StoreUser.default) AND card.id = t.id
                """, on: connection)
        }
    }

    /// Migration 8: every kept card's sort keys (read from its JSON, which only Swift
    /// decodes as the stores do), then every source ranked and counted.
    static func keyEveryCard(on connection: PostgresConnection) async throws {
        var batch: [(id: String, keys: CardSortKeys)] = []
        func write() async throws {
            guard !batch.isEmpty else { return }
            _ = try await PostgresStateDatabase.rows("""
                UPDATE card SET price_key = CASE WHEN t.priced THEN t.price END, price_inexact = t.price_inexact,
                  published = CASE WHEN t.dated THEN t.date END
                FROM unnest(\(batch.map(\.id))::text[], \(batch.map { $0.keys.price ?? 0 })::bigint[], \(batch.map { $0.keys.price != nil })::boolean[],
                            \(batch.map(\.keys.priceInexact))::boolean[], \(batch.map { $0.keys.published ?? 0 })::double precision[],
                            \(batch.map { $0.keys.published != nil })::boolean[]) AS t(id, price, priced, price_inexact, date, dated)
                WHERE card.user_id = \(StoreUser.default) AND card.id = t.id
                """, on: connection)
            batch = []
        }
        for row in try await PostgresStateDatabase.rows("SELECT id, card FROM card WHERE user_id = \(StoreUser.default)", on: connection) {
            let (id, json) = try row.decode((String, Data).self)
            guard let card = StoredCardForm.card(json) else { continue }
            batch.append((id, CardSortKeys(card)))
            if batch.count == 1000 { try await write() }
        }
        try await write()
        for row in try await PostgresStateDatabase.rows("SELECT DISTINCT source FROM card", on: connection) {
            try await rerank(source: try row.decode(String.self), on: connection)
        }
    }

    public func cards(of sources: [String]?) async throws -> [KeptCard] {
        let order = "ORDER BY card.source, card.rank"
        let rows = if let sources {
            try await migrated().query("""
                \(unescaped: Self.selectKept(person)) WHERE card.user_id = \(StoreUser.default) AND card.source = ANY(\(sources)::text[]) \(unescaped: order)
                """)
        } else {
            try await migrated().query("\(unescaped: Self.selectKept(person)) WHERE card.user_id = \(StoreUser.default) \(unescaped: order)")
        }
        return try rows.map(Self.kept)
    }

    public func card(id: String) async throws -> KeptCard? {
        try await migrated().query("""
            \(unescaped: Self.selectKept(person)) WHERE card.user_id = \(StoreUser.default) AND card.id = \(id)
            """).first.map(Self.kept)
    }

    public func cards(ids: [String]) async throws -> [KeptCard] {
        var seen = Set<String>()
        return try await kept(ids.filter { seen.insert($0).inserted }, in: migrated())
    }

    public func firstSeen(of ids: [String]) async throws -> [String: Date] {
        guard !ids.isEmpty else { return [:] }
        var seen: [String: Date] = [:]
        for row in try await migrated().query("""
            SELECT id, first_seen FROM card WHERE user_id = \(StoreUser.default) AND id = ANY(\(ids)::text[])
            """) {
            let (id, seconds) = try row.decode((String, Double).self)
            seen[id] = Date(timeIntervalSince1970: seconds)
        }
        return seen
    }

    static func kept(_ row: PostgresRow) throws -> KeptCard {
        let (json, position, firstSeen, lastSeen, goneSince, readAt, starredAt, number) = try row.decode((Data, Int, Double, Double, Double?, Double?, Double?, Int64?).self)
        guard let card = StoredCardForm.card(json) else { throw PostgresStateError.failed("a stored card cannot be read") }
        return KeptCard(card: card, dates: KeptDates(firstSeen: Date(timeIntervalSince1970: firstSeen), lastSeen: Date(timeIntervalSince1970: lastSeen),
                                                     goneSince: goneSince.map(Date.init(timeIntervalSince1970:)),
                                                     readAt: readAt.map(Date.init(timeIntervalSince1970:)),
                                                     starredAt: starredAt.map(Date.init(timeIntervalSince1970:)), number: number ?? 0),
                        position: position)
    }

    public func history(of id: String) async throws -> [CardChange] {
        try await migrated().query("""
            SELECT at, field, before, after FROM card_change WHERE user_id = \(StoreUser.default) AND id = \(id) ORDER BY at, seq
            """).compactMap { row in
            let (at, name, before, after) = try row.decode((Double, String, String, String).self)
            guard let field = TrackedField(rawValue: name) else { return nil }
            return CardChange(id: id, field: field, at: Date(timeIntervalSince1970: at),
                              before: StoredCardForm.value(fromJSON: before), after: StoredCardForm.value(fromJSON: after))
        }
    }

    public func listingTags() async throws -> [String: String] {
        try await bySource("SELECT source, listing_tag FROM card_source_version WHERE listing_tag IS NOT NULL", String.self)
    }

    /// Rows of (source, value) as a dictionary.
    private func bySource<Value: PostgresDecodable>(_ query: PostgresQuery, _ type: Value.Type) async throws -> [String: Value] {
        var values: [String: Value] = [:]
        for row in try await migrated().query(query) {
            let (source, value) = try row.decode((String, Value).self)
            values[source] = value
        }
        return values
    }

    public func listingTag(of source: String) async throws -> String? {
        try await migrated().query("SELECT listing_tag FROM card_source_version WHERE source = \(source)").first?.decode(String?.self) ?? nil
    }

    public func version(of source: String) async throws -> Int? {
        try await migrated().query("SELECT version FROM card_source_version WHERE source = \(source)").first?.decode(Int.self)
    }

    public func versions() async throws -> [String: Int] {
        try await bySource("SELECT source, version FROM card_source_version", Int.self)
    }

    public func purge(_ policy: @Sendable (String) -> KeepPolicy, now: Date, limit: Int) async throws -> Int {
        guard limit > 0 else { return 0 }
        let user = StoreUser.default
        // One pass says which sources hold anything to remove; only those are looked at.
        let sources = try await migrated().query("""
            SELECT source, count(*)::bigint, min(gone_since) FROM card WHERE user_id = \(user) AND NOT \(unescaped: Self.isStarred)
            GROUP BY source ORDER BY source
            """).map { try $0.decode((String, Int, Double?).self) }
        var removed = 0
        for (source, cards, oldest) in sources where removed < limit {
            let keep = policy(source)
            let cutoff = now.timeIntervalSince1970 - keep.goneFor
            guard cards > keep.maxCards || oldest.map({ $0 < cutoff }) == true else { continue }
            let room = limit - removed
            // Gone too long, then past the count: gone ones first, then the least recently seen.
            let count = try await database.withTransaction { connection in
                let expired = try await PostgresStateDatabase.rows("""
                    SELECT id FROM card WHERE user_id = \(user) AND source = \(source) AND gone_since < \(cutoff) AND NOT \(unescaped: Self.isStarred)
                    ORDER BY id LIMIT \(room)
                    """, on: connection).map { try $0.decode(String.self) }
                let total = try await PostgresStateDatabase.rows("""
                    SELECT count(*) FROM card WHERE user_id = \(user) AND source = \(source) AND NOT \(unescaped: Self.isStarred)
                    """, on: connection).first?.decode(Int.self) ?? 0
                var doomed = expired
                let over = min(total - expired.count - keep.maxCards, room - expired.count)
                if over > 0 {
                    doomed += try await PostgresStateDatabase.rows("""
                        SELECT id FROM card WHERE user_id = \(user) AND source = \(source) AND NOT (gone_since IS NOT NULL AND gone_since < \(cutoff))
                          AND NOT \(unescaped: Self.isStarred)
                        ORDER BY gone_since IS NULL, last_seen, id LIMIT \(over)
                        """, on: connection).map { try $0.decode(String.self) }
                }
                guard !doomed.isEmpty else { return 0 }
                // Marks first: the read counts' triggers find a mark's source through its card.
                _ = try await PostgresStateDatabase.rows("DELETE FROM card_reading WHERE id = ANY(\(doomed)::text[])", on: connection)
                _ = try await PostgresStateDatabase.rows("DELETE FROM card WHERE user_id = \(user) AND id = ANY(\(doomed)::text[])", on: connection)
                _ = try await PostgresStateDatabase.rows("DELETE FROM card_change WHERE user_id = \(user) AND id = ANY(\(doomed)::text[])", on: connection)
                _ = try await PostgresStateDatabase.rows("DELETE FROM card_search WHERE user_id = \(user) AND id = ANY(\(doomed)::text[])", on: connection)
                _ = try await PostgresStateDatabase.rows("DELETE FROM card_unsearched WHERE id = ANY(\(doomed)::text[])", on: connection)
                _ = try await PostgresStateDatabase.rows("DELETE FROM card_item_key WHERE id = ANY(\(doomed)::text[])", on: connection)
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO card_source_version (source, version) VALUES (\(source), 1)
                    ON CONFLICT (source) DO UPDATE SET version = card_source_version.version + 1, listing_tag = NULL
                    """, on: connection)
                try await Self.rerank(source: source, on: connection)
                return doomed.count
            }
            removed += count
        }
        return removed
    }

    public func summary() async throws -> [StoreSummary] {
        try await migrated().query("""
            SELECT c.source, count(*)::bigint, count(c.gone_since)::bigint,
              sum(octet_length(c.card) + octet_length(c.tracked) + octet_length(c.fingerprint) + octet_length(c.id) + octet_length(c.source) + 40)::bigint,
              coalesce(sum(h.rows), 0)::bigint
            FROM card c
            LEFT JOIN (SELECT user_id, id, count(*) AS rows FROM card_change GROUP BY user_id, id) h ON h.user_id = c.user_id AND h.id = c.id
            WHERE c.user_id = \(StoreUser.default) GROUP BY c.source ORDER BY c.source
            """).map { row in
            let (source, cards, gone, bytes, history) = try row.decode((String, Int, Int, Int, Int).self)
            return StoreSummary(source: source, cards: cards, gone: gone, historyRows: history, bytes: bytes)
        }
    }
}
