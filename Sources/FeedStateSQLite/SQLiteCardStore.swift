import FeedConfig
import FeedCore
import FeedFormats
import FeedState
import Foundation
import GRDB

/// The ``CardStore`` in `cards.sqlite` of a state directory. A card is its JSON line (the
/// documented card format) with the tracked values and a hash beside it, so a refresh
/// merges without decoding what it stored before.
public struct SQLiteCardStore: CardStore {
    let directory: SQLiteStateDirectory
    /// Whose marks it reads and writes (``StoreUser``).
    let person: Int

    public init(_ directory: SQLiteStateDirectory, person: Int = StoreUser.default) {
        self.directory = directory
        self.person = person
    }

    public func reading(as person: Int) -> any CardStore {
        SQLiteCardStore(directory, person: person)
    }

    static let schema: SQLiteSchema = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: card store") { db in
            // Keyed by user from the start: per-person state joins on (user_id, id).
            try db.execute(sql: """
                CREATE TABLE card (
                  user_id INTEGER NOT NULL, id TEXT NOT NULL, source TEXT NOT NULL, position INTEGER NOT NULL,
                  card BLOB NOT NULL, fingerprint TEXT NOT NULL, tracked TEXT NOT NULL,
                  first_seen REAL NOT NULL, last_seen REAL NOT NULL, gone_since REAL,
                  PRIMARY KEY (user_id, id));
                CREATE INDEX card_by_source ON card (user_id, source, position);
                CREATE TABLE card_change (
                  user_id INTEGER NOT NULL, id TEXT NOT NULL, at REAL NOT NULL, field TEXT NOT NULL,
                  before TEXT NOT NULL, after TEXT NOT NULL);
                CREATE INDEX card_change_by_card ON card_change (user_id, id, at);
                CREATE TABLE card_source_version (source TEXT PRIMARY KEY, version INTEGER NOT NULL);
                """)
        }
        migrator.registerMigration("v2: pages from indexes") { db in
            // What a page is ordered by, beside each card: its rank in its source (feed
            // order), its price in millionths, its date; and each source's card count. The
            // indexes hold the source too (and, as every index, the row's id), so the rows up
            // to a page are read from an index alone.
            try db.execute(sql: """
                ALTER TABLE card ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE card ADD COLUMN price_key INTEGER;
                ALTER TABLE card ADD COLUMN price_inexact INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE card ADD COLUMN published REAL;
                ALTER TABLE card_source_version ADD COLUMN cards INTEGER NOT NULL DEFAULT 0;
                DROP INDEX card_by_source;
                CREATE INDEX card_by_source ON card (user_id, source, rank);
                CREATE INDEX card_by_rank ON card (user_id, rank, source);
                CREATE INDEX card_by_price ON card (user_id, price_key, rank, source) WHERE price_key IS NOT NULL;
                CREATE INDEX card_by_date ON card (user_id, published, rank, source) WHERE published IS NOT NULL;
                CREATE INDEX card_inexact_price ON card (user_id) WHERE price_inexact = 1;
                CREATE INDEX card_gone ON card (user_id, gone_since, source) WHERE gone_since IS NOT NULL;
                """)
            let update = try db.makeStatement(sql: "UPDATE card SET price_key = ?, price_inexact = ?, published = ? WHERE rowid = ?")
            let rows = try Row.fetchCursor(db, sql: "SELECT rowid, card FROM card")
            while let row = try rows.next() {
                guard let card = StoredCardForm.card(row["card"]) else { continue }
                let keys = CardSortKeys(card)
                try update.execute(arguments: [keys.price, keys.priceInexact, keys.published, row["rowid"] as Int64])
            }
            for source in try String.fetchAll(db, sql: "SELECT DISTINCT source FROM card") {
                try rerank(db, source: source, user: StoreUser.default)
            }
        }
        migrator.registerMigration("v3: listings seen per source") { db in
            // What each source's last complete listing was read from (LiveListing.tag), and
            // when it was last listed (see lastSeen).
            try db.execute(sql: """
                ALTER TABLE card_source_version ADD COLUMN listing_tag TEXT;
                ALTER TABLE card_source_version ADD COLUMN listed_at REAL;
                """)
        }
        migrator.registerMigration("v4: reading marks") { db in
            // A person's marks beside the cards, keyed as the cards are: a recording that
            // rewrites a card leaves them, a purge removes them with it.
            try db.execute(sql: """
                CREATE TABLE card_reading (
                  user_id INTEGER NOT NULL, id TEXT NOT NULL, read_at REAL, starred_at REAL,
                  PRIMARY KEY (user_id, id)) WITHOUT ROWID;
                CREATE INDEX card_starred ON card_reading (user_id, starred_at) WHERE starred_at IS NOT NULL;
                """)
        }
        migrator.registerMigration("v5: search") { db in
            try createFirstSearchTable(db)
        }
        migrator.registerMigration("v6: read counts") { db in
            try createReadCounts(db)
        }
        migrator.registerMigration("v7: search newest first") { db in
            try createSearchTable(db)
        }
        migrator.registerMigration("v8: marks per person") { db in
            // Cards stay the default user's, marks become each person's: the read counts'
            // triggers look cards up under the default user, and a card's marks are found
            // by its id alone (retention keeps what anyone starred).
            try db.execute(sql: """
                DROP TRIGGER IF EXISTS card_read_marked; DROP TRIGGER IF EXISTS card_read_changed;
                DROP TRIGGER IF EXISTS card_read_unmarked; DROP TRIGGER IF EXISTS card_read_removed;
                CREATE INDEX card_reading_by_card ON card_reading (id);
                """)
            try createReadCountTriggers(db)
        }
        migrator.registerMigration("v9: card numbers") { db in
            // Each card's number, for the Google Reader API's item ids (filled by v13).
            try db.execute(sql: """
                ALTER TABLE card ADD COLUMN number INTEGER;
                CREATE INDEX card_by_number ON card (number);
                """)
        }
        migrator.registerMigration("v10: marks versions") { db in
            // Each person's marks' change counter (CardStore.marksVersion), moved by the
            // statements that mark: one row a person, not a trigger a row.
            try db.execute(sql: "CREATE TABLE card_marks_version (user_id INTEGER PRIMARY KEY, version INTEGER NOT NULL)")
        }
        migrator.registerMigration("v11: search rows written apart from recording") { db in
            try createUnsearched(db)
        }
        migrator.registerMigration("v12: undated cards by first seen") { db in
            // `published` is the card's date as pages order it: when it was published, else
            // when it was first seen (CardSortKeys.date), so an undated deal sorts among
            // the posts of its day instead of after every dated card.
            try db.execute(sql: "UPDATE card SET published = first_seen WHERE published IS NULL")
        }
        migrator.registerMigration("v13: cards numbered in the order first seen") { db in
            // KeptDates.number: 1, 2, 3… as cards are first seen, never reused (the last one
            // given is kept apart from the cards, so a purge cannot hand it out again). A
            // hash of the id numbered cards before: Fever's apps fetch what is new as the
            // numbers past the last they have, which only a sequence can answer.
            try db.execute(sql: """
                UPDATE card SET number = numbered.n FROM (
                  SELECT rowid AS row, row_number() OVER (ORDER BY first_seen, source, rank, id) AS n FROM card) AS numbered
                WHERE card.rowid = numbered.row;
                CREATE TABLE card_number_last (last INTEGER NOT NULL);
                INSERT INTO card_number_last (last) SELECT coalesce(max(number), 0) FROM card;
                DROP INDEX card_by_number;
                CREATE UNIQUE INDEX card_by_number ON card (number);
                """)
        }
        migrator.registerMigration("v14: item decisions") { db in
            // ItemDecisionStore: a person's word on which cards are one item, by pair.
            try db.execute(sql: """
                CREATE TABLE item_decision (first TEXT NOT NULL, second TEXT NOT NULL, same INTEGER NOT NULL,
                  decided_at REAL NOT NULL, PRIMARY KEY (first, second)) WITHOUT ROWID
                """)
        }
        migrator.registerMigration("v15: pages by title") { db in
            // Each card's title as pages order it (CardSortKeys.title): a page by title
            // decoded every kept card (26 s and 4 GB at a million cards), and reads this
            // column now. No index: it cost every first recording 5%.
            try db.execute(sql: "ALTER TABLE card ADD COLUMN title_key TEXT NOT NULL DEFAULT ''")
            let update = try db.makeStatement(sql: "UPDATE card SET title_key = ? WHERE rowid = ?")
            let rows = try Row.fetchCursor(db, sql: "SELECT rowid, card FROM card")
            while let row = try rows.next() {
                guard let card = StoredCardForm.card(row["card"]) else { continue }
                try update.execute(arguments: [CardSortKeys(card).title, row["rowid"] as Int64])
            }
        }
        migrator.registerMigration("v16: same-item keys") { db in
            try createItemKeys(db)
        }
        return SQLiteSchema(name: "cards", migrator: migrator)
    }()

    /// A card's last-seen time as a column expression over `card`. A complete listing
    /// moves its source's `listed_at`, not each card's `last_seen`: every card it does not
    /// mark gone is in it, so a listed card was last seen at the later of the two (writing
    /// 25,000 rows for a refresh of 500 unchanged feeds was most of its time). A card
    /// marked gone takes the listing time into its own row first.
    static let lastSeenValue = """
        CASE WHEN card.gone_since IS NULL THEN max(card.last_seen, coalesce(
          (SELECT listed_at FROM card_source_version v WHERE v.source = card.source), 0)) ELSE card.last_seen END
        """
    /// ``lastSeenValue`` as a selected column named `last_seen`.
    static let lastSeen = "\(lastSeenValue) AS last_seen"

    /// The columns ``kept(_:path:)`` reads, over ``keptFrom``.
    static let keptColumns = "card.card, card.position, card.first_seen, \(lastSeen), card.gone_since, reading.read_at, reading.starred_at, card.number"
    /// The cards with `person`'s marks (an integer, never text from outside).
    static func keptFrom(_ person: Int) -> String {
        "card LEFT JOIN card_reading reading ON reading.user_id = \(person) AND reading.id = card.id"
    }
    /// A card someone starred (over `card`): kept by every purge.
    static let isStarred = """
        EXISTS (SELECT 1 FROM card_reading starred WHERE starred.id = card.id AND starred.starred_at IS NOT NULL)
        """

    /// Numbers the cards of `source` 0, 1, 2… in the order ``cards(of:)`` gives them (listed
    /// in their listing's order, then gone), which is the feed order's round, and counts
    /// them. Run whenever a source's cards are added, moved, gone or removed.
    static func rerank(_ db: Database, source: String, user: Int) throws {
        try db.cachedStatement(sql: """
            UPDATE card SET rank = ranked.n FROM (
              SELECT id, row_number() OVER (ORDER BY gone_since IS NOT NULL, position, id) - 1 AS n
              FROM card WHERE user_id = ?1 AND source = ?2) AS ranked
            WHERE card.user_id = ?1 AND card.id = ranked.id AND card.rank <> ranked.n
            """).execute(arguments: [user, source])
        try db.cachedStatement(sql: """
            UPDATE card_source_version SET cards = (SELECT count(*) FROM card WHERE user_id = ?1 AND source = ?2) WHERE source = ?2
            """).execute(arguments: [user, source])
    }

    /// After a purge: the ranks of `source`'s kept cards closed over the `removed` ones'
    /// (each card after one moves down by the removed ranks before it), the order as it was.
    /// Only the cards after the first removed one are read, where ``rerank(_:source:user:)``
    /// reads every card of the source: a purge of 100,000 gone cards spent most of its
    /// time reranking.
    static func closeRanks(_ db: Database, source: String, removed: [Int], user: Int) throws {
        guard let first = removed.min() else { return }
        let ranks = try JSONList.text(removed)
        try db.cachedStatement(sql: """
            UPDATE card SET rank = rank - (SELECT count(*) FROM json_each(?3) WHERE value < card.rank)
            WHERE user_id = ?1 AND source = ?2 AND rank > ?4
            """).execute(arguments: [user, source, ranks, first])
        try db.cachedStatement(sql: """
            UPDATE card_source_version SET cards = (SELECT count(*) FROM card WHERE user_id = ?1 AND source = ?2) WHERE source = ?2
            """).execute(arguments: [user, source])
    }

    /// Rows per INSERT statement (SQLite allows 32,766 parameters; 15 a row).
    static let insertRows = 100

    var database: any DatabaseWriter {
        get throws { try directory.cardDatabase(Self.schema) }
    }

    public func record(_ listings: [LiveListing]) async throws {
        guard !listings.isEmpty else { return }
        let user = StoreUser.default
        let path = directory.cardsPath
        try await database.write { db in
            // Rows go in `insertRows` at a time: one statement per card was most of the time
            // a first recording spent in SQLite.
            func insert(rows count: Int) throws -> Statement {
                try db.cachedStatement(sql: """
                    INSERT INTO card (user_id, id, source, position, card, fingerprint, tracked, first_seen, last_seen, gone_since,
                                      price_key, price_inexact, published, rank, number, title_key)
                    VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)", count: count).joined(separator: ", "))
                    ON CONFLICT (user_id, id) DO UPDATE SET source = excluded.source, position = excluded.position, card = excluded.card,
                      fingerprint = excluded.fingerprint, tracked = excluded.tracked, last_seen = excluded.last_seen, gone_since = NULL,
                      price_key = excluded.price_key, price_inexact = excluded.price_inexact, published = excluded.published,
                      title_key = excluded.title_key
                    RETURNING rowid
                    """)
            }
            let seen = try db.cachedStatement(sql: """
                UPDATE card SET position = ?, last_seen = ?, gone_since = NULL WHERE user_id = ? AND id = ?
                """)
            let gone = try db.cachedStatement(sql: "UPDATE card SET gone_since = ?, last_seen = max(last_seen, ?) WHERE user_id = ? AND id = ?")
            let lookup = try db.cachedStatement(sql: """
                SELECT id, first_seen, gone_since, position, tracked, fingerprint FROM card WHERE user_id = ? AND id = ?
                """)
            let change = try db.cachedStatement(sql: """
                INSERT INTO card_change (user_id, id, at, field, before, after) VALUES (?, ?, ?, ?, ?, ?)
                """)
            // Every card written: its search row is written later (``updateSearch()``).
            var unsearched: [Int64] = []
            // The last number given (KeptDates.number), read when a new card needs one.
            var lastNumber: Int64?
            func nextNumber() throws -> Int64 {
                let next = try (lastNumber ?? Int64.fetchOne(db.cachedStatement(sql: "SELECT last FROM card_number_last")) ?? 0) + 1
                lastNumber = next
                return next
            }
            for listing in listings {
                if listing.unchanged || listing.complete && listing.tag != nil {
                    // The listing the store merged last (confirmed by its upstream, or read
                    // again from the same bytes): its cards are seen again, nothing else
                    // moves, and none of them is encoded or compared.
                    try db.cachedStatement(sql: "UPDATE card_source_version SET listed_at = max(coalesce(listed_at, 0), ?) WHERE source = ? AND listing_tag = ?")
                        .execute(arguments: [listing.at.timeIntervalSince1970, listing.source, listing.tag])
                    if db.changesCount > 0 || listing.unchanged { continue }
                }
                var known: [String: ListingMerge.Known] = [:]
                func remember(_ row: Row) throws {
                    known[try Self.column(row, "id", path: path)] = ListingMerge.Known(
                        firstSeen: Date(timeIntervalSince1970: try Self.column(row, "first_seen", path: path)),
                        goneSince: try (Self.column(row, "gone_since", path: path) as Double?).map(Date.init(timeIntervalSince1970:)),
                        position: try Self.column(row, "position", path: path), trackedText: try Self.column(row, "tracked", path: path),
                        fingerprint: try Self.column(row, "fingerprint", path: path))
                }
                if listing.complete {
                    // Every card of the source: what the listing lacks is gone.
                    let rows = try Row.fetchCursor(db.cachedStatement(sql: """
                        SELECT id, first_seen, gone_since, position, tracked, fingerprint FROM card WHERE user_id = ? AND source = ?
                        """), arguments: [user, listing.source])
                    while let row = try rows.next() { try remember(row) }
                } else {
                    // A first page of a large source: only the cards it lists.
                    for card in listing.cards {
                        if let row = try Row.fetchOne(lookup, arguments: [user, card.id]) { try remember(row) }
                    }
                }
                let merge = ListingMerge(listing: listing, known: known)
                let at = listing.at.timeIntervalSince1970
                let fresh = merge.firstRanks != nil
                let changed = merge.writes.filter(\.changed)
                var start = 0
                while start < changed.count {
                    let chunk = changed[start..<min(start + Self.insertRows, changed.count)]
                    var values: [(any DatabaseValueConvertible)?] = []
                    values.reserveCapacity(chunk.count * 15)
                    for write in chunk {
                        let card = listing.cards[write.position]
                        let keys = CardSortKeys(card)
                        // A card kept already keeps its number (the upsert leaves it).
                        let number: Int64? = known[card.id] == nil ? try nextNumber() : nil
                        values += [user, card.id, card.source, write.position, Data(write.json), write.fingerprint,
                                   StoredCardForm.trackedText(of: card), write.firstSeen.timeIntervalSince1970, at,
                                   keys.price, keys.priceInexact, keys.date(firstSeen: write.firstSeen), merge.firstRanks?[write.position] ?? write.position, number,
                                   keys.title]
                    }
                    unsearched += try Int64.fetchAll(insert(rows: chunk.count), arguments: StatementArguments(values))
                    start += chunk.count
                }
                // A card now gone was last seen when its source was last listed (lastSeen).
                let listedAt = try Double.fetchOne(db.cachedStatement(sql: "SELECT listed_at FROM card_source_version WHERE source = ?"),
                                                   arguments: [listing.source]) ?? 0
                for id in merge.gone { try gone.execute(arguments: [at, listedAt, user, id]) }
                // A complete listing moves its source's listed_at (lastSeen) for every card it
                // still has; a partial one moves each card's own.
                for write in merge.writes where !write.changed && !(listing.complete && write.onlySeen) {
                    try seen.execute(arguments: [write.position, at, user, listing.cards[write.position].id])
                }
                for row in merge.changes {
                    try change.execute(arguments: [user, row.id, at, row.field.rawValue, JSONLines.text(of: row.before), JSONLines.text(of: row.after)])
                }
                if merge.movesVersion {
                    try db.cachedStatement(sql: """
                        INSERT INTO card_source_version (source, version, cards) VALUES (?, 1, ?)
                        ON CONFLICT (source) DO UPDATE SET version = version + 1
                        """).execute(arguments: [listing.source, merge.writes.count])
                }
                if !fresh, merge.movesVersion || merge.writes.contains(where: { !$0.onlySeen }) {
                    try Self.rerank(db, source: listing.source, user: user)
                }
                if listing.complete {
                    try db.cachedStatement(sql: "UPDATE card_source_version SET listing_tag = ?, listed_at = max(coalesce(listed_at, 0), ?) WHERE source = ?")
                        .execute(arguments: [listing.tag, at, listing.source])
                } else {
                    try db.cachedStatement(sql: "UPDATE card_source_version SET listing_tag = NULL WHERE source = ?").execute(arguments: [listing.source])
                }
            }
            if let lastNumber { try db.cachedStatement(sql: "UPDATE card_number_last SET last = ?").execute(arguments: [lastNumber]) }
            try Self.awaitSearch(db, rows: unsearched)
        }
    }

    public func cards(of sources: [String]?) async throws -> [KeptCard] {
        let path = directory.cardsPath
        return try await database.read { db in
            var sql = "SELECT \(Self.keptColumns) FROM \(Self.keptFrom(person)) WHERE card.user_id = ?"
            var arguments: StatementArguments = [StoreUser.default]
            if let sources {
                sql += " AND card.source IN (\(sources.map { _ in "?" }.joined(separator: ", ")))"
                arguments += StatementArguments(sources)
            }
            sql += " ORDER BY card.source, card.rank"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { try Self.kept($0, path: path) }
        }
    }

    public func card(id: String) async throws -> KeptCard? {
        let path = directory.cardsPath
        return try await database.read { db in
            try Row.fetchOne(db, sql: """
                SELECT \(Self.keptColumns) FROM \(Self.keptFrom(person)) WHERE card.user_id = ? AND card.id = ?
                """, arguments: [StoreUser.default, id]).map { try Self.kept($0, path: path) }
        }
    }

    public func cards(ids: [String]) async throws -> [KeptCard] {
        var seen = Set<String>()
        let ids = ids.filter { seen.insert($0).inserted }
        guard !ids.isEmpty else { return [] }
        let (path, person) = (directory.cardsPath, person)
        // The ids go in as one JSON array (as marks and numbers do): one statement, however many.
        let wanted = try JSONList.text(ids)
        return try await database.read { db in
            let byID = Dictionary(try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(Self.keptColumns) FROM \(Self.keptFrom(person))
                WHERE card.user_id = ? AND card.id IN (SELECT value FROM json_each(?))
                """), arguments: [StoreUser.default, wanted]).map { row in
                let kept = try Self.kept(row, path: path)
                return (kept.card.id, kept)
            }, uniquingKeysWith: { first, _ in first })
            return ids.compactMap { byID[$0] }
        }
    }

    public func firstSeen(of ids: [String]) async throws -> [String: Date] {
        guard !ids.isEmpty else { return [:] }
        let path = directory.cardsPath
        return try await database.read { db in
            var seen: [String: Date] = [:]
            // 500 ids a statement: SQLite binds at most 32,766 values.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT id, first_seen FROM card WHERE user_id = ? AND id IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))
                    """, arguments: [StoreUser.default] + StatementArguments(chunk))
                while let row = try rows.next() {
                    seen[try Self.column(row, "id", path: path)] = Date(timeIntervalSince1970: try Self.column(row, "first_seen", path: path))
                }
            }
            return seen
        }
    }

    static func kept(_ row: Row, path: String) throws -> KeptCard {
        guard let card = StoredCardForm.card(try column(row, "card", path: path)) else {
            throw SQLiteStateError.damagedCardStore(path: path, reason: "a stored card cannot be read")
        }
        func date(_ name: String) throws -> Date? {
            try (column(row, name, path: path) as Double?).map(Date.init(timeIntervalSince1970:))
        }
        return KeptCard(card: card, dates: KeptDates(
            firstSeen: Date(timeIntervalSince1970: try column(row, "first_seen", path: path)),
            lastSeen: Date(timeIntervalSince1970: try column(row, "last_seen", path: path)),
            goneSince: try date("gone_since"), readAt: try date("read_at"), starredAt: try date("starred_at"),
            number: try column(row, "number", path: path)),
                        position: try column(row, "position", path: path))
    }

    /// A column of a stored row. A value of the wrong type (a hand edit, a bad disk) is the
    /// store's damage, said as such: GRDB's subscripts trap on it, and a trap in `serve`
    /// ends every reader's answers.
    static func column<Value: DatabaseValueConvertible>(_ row: Row, _ name: String, path: String) throws -> Value {
        do {
            return try row.decode(Value.self, forColumn: name)
        } catch {
            throw SQLiteStateError.damagedCardStore(path: path, reason: "a card's \(name) is not a \(Value.self == String.self ? "text" : "number")")
        }
    }

    public func history(of id: String) async throws -> [CardChange] {
        try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT at, field, before, after FROM card_change WHERE user_id = ? AND id = ? ORDER BY at, rowid
                """, arguments: [StoreUser.default, id]).compactMap { row in
                guard let field = TrackedField(rawValue: row["field"]) else { return nil }
                return CardChange(id: id, field: field, at: Date(timeIntervalSince1970: row["at"]),
                                  before: StoredCardForm.value(fromJSON: row["before"]), after: StoredCardForm.value(fromJSON: row["after"]))
            }
        }
    }

    public func listingTags() async throws -> [String: String] {
        try await database.read { db in
            var tags: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT source, listing_tag FROM card_source_version WHERE listing_tag IS NOT NULL") {
                tags[row["source"]] = row["listing_tag"]
            }
            return tags
        }
    }

    /// One row, as ``version(of:)``.
    public func listingTag(of source: String) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT listing_tag FROM card_source_version WHERE source = ?"), arguments: [source])
        }
    }

    public func versions() async throws -> [String: Int] {
        try await database.read { db in
            var versions: [String: Int] = [:]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT source, version FROM card_source_version"))
            while let row = try rows.next() { versions[row[0]] = row[1] }
            return versions
        }
    }

    /// One row: `serve`'s refresher asks after every refresh of every source.
    public func version(of source: String) async throws -> Int? {
        try await database.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT version FROM card_source_version WHERE source = ?"), arguments: [source])
        }
    }

    public func purge(_ policy: @Sendable (String) -> KeepPolicy, now: Date, limit: Int) async throws -> Int {
        guard limit > 0 else { return 0 }
        let user = StoreUser.default
        return try await database.write { db in
            var doomed: [(id: String, source: String, rank: Int)] = []
            // Each source's count (kept by rerank) says which hold more than they may.
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT source, cards FROM card_source_version") { counts[row["source"]] = row["cards"] }
            // Starred cards are kept and count for none of their source's. From the stars
            // (few) to their cards: the planner, left to itself, walked every card instead,
            // a million rows read for each batch.
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT card.source, count(DISTINCT card.id) AS starred
                FROM card_reading reading INDEXED BY card_starred CROSS JOIN card ON card.user_id = ? AND card.id = reading.id
                WHERE reading.starred_at IS NOT NULL GROUP BY card.source
                """), arguments: [user]) {
                counts[row["source"], default: 0] -= row["starred"] as Int
            }
            var policies: [String: KeepPolicy] = [:]
            func keep(_ source: String) -> KeepPolicy {
                if let known = policies[source] { return known }
                let found = policy(source)
                policies[source] = found
                return found
            }
            // Gone too long: the gone index from the oldest, each card against its source's
            // own limit, up to the latest any source allows.
            let latest = counts.keys.map { now.timeIntervalSince1970 - keep($0).goneFor }.max() ?? 0
            let expired = try Row.fetchCursor(db, sql: """
                SELECT id, source, gone_since, rank FROM card INDEXED BY card_gone
                WHERE user_id = ? AND gone_since IS NOT NULL AND gone_since < ? AND NOT \(Self.isStarred) ORDER BY gone_since, source, rowid
                """, arguments: [user, latest])
            var expiredBySource: [String: Int] = [:]
            while doomed.count < limit, let row = try expired.next() {
                let source: String = row["source"]
                guard (row["gone_since"] as Double) < now.timeIntervalSince1970 - keep(source).goneFor else { continue }
                doomed.append((row["id"], source, row["rank"]))
                expiredBySource[source, default: 0] += 1
            }
            for (source, cards) in counts.sorted(by: { $0.key < $1.key }) where doomed.count < limit {
                let keep = keep(source)
                let over = cards - (expiredBySource[source] ?? 0) - keep.maxCards
                guard over > 0 else { continue }
                // Gone ones first, then the least recently seen (CardRetention).
                let cutoff = now.timeIntervalSince1970 - keep.goneFor
                let oldest = try Row.fetchAll(db, sql: """
                    SELECT id, rank FROM card INDEXED BY card_by_source
                    WHERE user_id = ? AND source = ? AND NOT (gone_since IS NOT NULL AND gone_since < ?) AND NOT \(Self.isStarred)
                    ORDER BY gone_since IS NULL, \(Self.lastSeenValue), id LIMIT ?
                    """, arguments: [user, source, cutoff, min(over, limit - doomed.count)])
                doomed += oldest.map { ($0["id"], source, $0["rank"]) }
            }
            // The batch's ids go in as one JSON array (json_each), four statements for all of
            // them: four compiled statements a card (each opening the search index's
            // structure anew) made a purge of 100,000 cards take minutes.
            let ids = try JSONList.text(doomed.map(\.id))
            let doomedIDs = "SELECT value FROM json_each(?2)"
            let statements: [(String, StatementArguments)] = [
                ("DELETE FROM card_search WHERE rowid IN (SELECT search_key FROM card WHERE user_id = ?1 AND id IN (\(doomedIDs)))", [user, ids]),
                ("DELETE FROM card_item_key WHERE row IN (SELECT rowid FROM card WHERE user_id = ?1 AND id IN (\(doomedIDs)))", [user, ids]),
                ("DELETE FROM card WHERE user_id = ?1 AND id IN (\(doomedIDs))", [user, ids]),
                ("DELETE FROM card_change WHERE user_id = ?1 AND id IN (\(doomedIDs))", [user, ids]),
                // Marks are each person's: every person's marks of these cards go with them.
                ("DELETE FROM card_reading WHERE id IN (SELECT value FROM json_each(?1))", [ids]),
            ]
            for (sql, arguments) in statements where !doomed.isEmpty {
                try db.cachedStatement(sql: sql).execute(arguments: arguments)
            }
            for (source, removed) in Dictionary(grouping: doomed, by: \.source) {
                try db.cachedStatement(sql: """
                    INSERT INTO card_source_version (source, version) VALUES (?, 1)
                    ON CONFLICT (source) DO UPDATE SET version = version + 1, listing_tag = NULL
                    """).execute(arguments: [source])
                try Self.closeRanks(db, source: source, removed: removed.map(\.rank), user: user)
            }
            return doomed.count
        }
    }

    public func summary() async throws -> [StoreSummary] {
        try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT source, count(*) AS cards, count(gone_since) AS gone,
                  sum(length(card) + length(tracked) + length(fingerprint) + length(id) + length(source) + 40) AS bytes,
                  (SELECT count(*) FROM card_change h WHERE h.user_id = c.user_id AND h.id IN
                     (SELECT id FROM card WHERE user_id = c.user_id AND source = c.source)) AS history
                FROM card c WHERE user_id = ? GROUP BY source ORDER BY source
                """, arguments: [StoreUser.default]).map { row in
                StoreSummary(source: row["source"], cards: row["cards"], gone: row["gone"], historyRows: row["history"], bytes: row["bytes"])
            }
        }
    }
}
