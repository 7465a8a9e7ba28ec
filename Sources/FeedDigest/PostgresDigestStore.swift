import FeedCore
import FeedEngine
import FeedStatePostgres
import Foundation
import PostgresNIO

/// The ``DigestStore`` in a shared PostgreSQL database. The lock is a session advisory
/// lock per digest name, held on a connection of its own for the whole run: the server
/// drops it when that connection ends, so a killed or cut-off host never leaves it held.
public struct PostgresDigestStore: DigestStore {
    let database: PostgresStateDatabase

    public init(_ database: PostgresStateDatabase) {
        self.database = database
    }

    static let schema = PostgresSchema(component: "digests", migrations: [
        .init("1: digest state, pending delivery", [
            """
            CREATE TABLE digest_item (
              digest text NOT NULL, card_id text NOT NULL, source text NOT NULL,
              first_seen double precision NOT NULL, last_seen double precision NOT NULL, price text,
              reported boolean NOT NULL DEFAULT false, present boolean NOT NULL DEFAULT true, card text NOT NULL,
              PRIMARY KEY (digest, card_id))
            """,
            """
            CREATE TABLE digest_source (
              digest text NOT NULL, source text NOT NULL, first_available double precision NOT NULL,
              PRIMARY KEY (digest, source))
            """,
            "CREATE TABLE digest_run (digest text PRIMARY KEY, last_success double precision NOT NULL, runs integer NOT NULL)",
            """
            CREATE TABLE digest_delivery (
              digest text PRIMARY KEY, path text NOT NULL, text text NOT NULL, created double precision NOT NULL)
            """,
        ]),
        .init("2: alerts and delivery targets", [
            "ALTER TABLE digest_item ADD COLUMN holding text NOT NULL DEFAULT ''",
            """
            CREATE TABLE digest_outbox (
              digest text NOT NULL, target text NOT NULL, report_id text NOT NULL, created double precision NOT NULL,
              payload text NOT NULL, PRIMARY KEY (digest, target, report_id))
            """,
        ]),
        // Reports committed at the same time (`--date`) are owed in the order committed.
        .init("3: outbox order", ["ALTER TABLE digest_outbox ADD COLUMN seq bigserial"]),
        // `--output FILE` became a `file` target through the outbox: a file an earlier
        // version committed and did not finish writing is owed to that file's target.
        .init("4: file output through the outbox", [
            """
            INSERT INTO digest_outbox (digest, target, report_id, created, payload)
            SELECT digest, 'file ' || path, md5(digest || ' ' || path || ' ' || created::text), created,
                   json_build_object('body', text, 'headers', json_build_object())::text
            FROM digest_delivery
            ON CONFLICT DO NOTHING
            """,
            "DROP TABLE digest_delivery",
        ]),
    ])

    private func migrated() async throws -> PostgresStateDatabase {
        try await database.migrate(Self.schema)
        return database
    }

    public func withLock<T>(digest: String, wait: Double, _ body: (DigestLock) async throws -> T) async throws -> T {
        _ = try await migrated()
        let connection = try await database.openConnection()
        do {
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(wait * 1000)))
            // hashtextextended: the server's own 64-bit hash of the name, one key per digest.
            let key = "aggregate digest \(digest)"
            while true {
                let rows = try await PostgresStateDatabase.rows("SELECT pg_try_advisory_lock(hashtextextended(\(key), 0))", on: connection)
                if try rows.first?.decode(Bool.self) == true { break }
                guard ContinuousClock.now < deadline else { throw DigestJob.Failure.busy(digest) }
                try await Task.sleep(for: .milliseconds(50))
            }
            let value = try await body(DigestLock(digest: digest, connection: connection))
            try? await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    public func memory(of digest: String, cards: [String: Card]) async throws -> DigestMemory {
        let database = try await migrated()
        var memory = DigestMemory()
        let items = try await database.query("""
            SELECT first_seen, last_seen, price, reported, present, card, holding, card_id FROM digest_item WHERE digest = \(digest)
            """)
        for row in items {
            let (firstSeen, lastSeen, price, reported, present, text, holding, id) =
                try row.decode((Double, Double, String?, Bool, Bool, String, String, String).self)
            guard let card = StoredCard.card(text, id: id, cards: cards) else { continue }
            memory.entries[card.id] = DigestEntry(
                card: card, firstSeen: Date(timeIntervalSince1970: firstSeen), lastSeen: Date(timeIntervalSince1970: lastSeen),
                price: StoredCard.price(price), reported: reported, present: present, holding: StoredCard.holding(holding))
        }
        for row in try await database.query("SELECT source FROM digest_source WHERE digest = \(digest)") {
            memory.knownSources.insert(try row.decode(String.self))
        }
        memory.lastSuccess = try await database.query("SELECT last_success FROM digest_run WHERE digest = \(digest)")
            .first.map { Date(timeIntervalSince1970: try $0.decode(Double.self)) }
        return memory
    }

    public func commit(_ plan: DigestPlan, under lock: DigestLock, now: Date, outbox: [OutgoingReport]) async throws {
        let rows = try plan.writes.map { entry in (entry, try StoredCard.text(entry, of: plan)) }
        let sources = plan.newlyKnownSources
        let at = now.timeIntervalSince1970
        let digest = lock.digest
        // On the connection that holds the lock: if it was lost, so is this commit (another
        // host may hold the lock by now); the server rolls back what a dead connection began.
        guard let held = lock.connection, !held.isClosed else {
            throw PostgresStateError.failed("the connection holding the digest's lock was lost")
        }
        _ = try await migrated()
        try await PostgresStateDatabase.inTransaction(on: held) { connection in
            for (entry, card) in rows {
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO digest_item (digest, card_id, source, first_seen, last_seen, price, reported, present, card, holding)
                    VALUES (\(digest), \(entry.cardID), \(entry.source), \(entry.firstSeen.timeIntervalSince1970),
                            \(entry.lastSeen.timeIntervalSince1970), \(entry.price.map { "\($0)" }), \(entry.reported),
                            \(entry.present), \(card), \(StoredCard.holding(entry.holding)))
                    ON CONFLICT (digest, card_id) DO UPDATE SET last_seen = excluded.last_seen, price = excluded.price,
                      reported = excluded.reported OR digest_item.reported, present = excluded.present, card = excluded.card,
                      holding = excluded.holding
                    """, on: connection)
            }
            for report in outbox {
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO digest_outbox (digest, target, report_id, created, payload)
                    VALUES (\(digest), \(report.target), \(report.reportID), \(report.created.timeIntervalSince1970), \(report.payload.text))
                    ON CONFLICT DO NOTHING
                    """, on: connection)
            }
            for source in sources {
                _ = try await PostgresStateDatabase.rows("""
                    INSERT INTO digest_source (digest, source, first_available) VALUES (\(digest), \(source), \(at))
                    ON CONFLICT DO NOTHING
                    """, on: connection)
            }
            _ = try await PostgresStateDatabase.rows("""
                INSERT INTO digest_run (digest, last_success, runs) VALUES (\(digest), \(at), 1)
                ON CONFLICT (digest) DO UPDATE SET last_success = excluded.last_success, runs = digest_run.runs + 1
                """, on: connection)
        }
    }

    public func owed(by digest: String) async throws -> [OutgoingReport] {
        try await migrated().query("""
            SELECT target, report_id, created, payload FROM digest_outbox WHERE digest = \(digest) ORDER BY created, seq
            """).map { row in
            let (target, reportID, created, text) = try row.decode((String, String, Double, String).self)
            guard let payload = DeliveryPayload(text: text) else {
                throw PostgresStateError.failed("a report owed by digest \(digest) cannot be read")
            }
            return OutgoingReport(target: target, reportID: reportID, created: Date(timeIntervalSince1970: created), payload: payload)
        }
    }

    public func delivered(_ report: OutgoingReport, digest: String) async throws {
        _ = try await migrated().query("""
            DELETE FROM digest_outbox WHERE digest = \(digest) AND target = \(report.target) AND report_id = \(report.reportID)
            """)
    }
}
