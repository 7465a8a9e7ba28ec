import FeedCore
import FeedEngine
import FeedStateSQLite
import Foundation
import GRDB

/// The ``DigestStore`` in `state.sqlite` of a state directory; the lock is a file lock
/// beside it (`digest-<name>.lock`), which the kernel drops when the process ends.
public struct SQLiteDigestStore: DigestStore {
    let directory: SQLiteStateDirectory

    public init(_ directory: SQLiteStateDirectory) {
        self.directory = directory
    }

    /// The digest tables. The identifiers are those the file had when the engine migrated
    /// it, so existing files are not migrated again.
    static let schema: SQLiteSchema = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v2: digest state") { db in
            try db.create(table: "digest_item") { table in
                table.column("digest", .text).notNull()
                table.column("card_id", .text).notNull()
                table.column("source", .text).notNull()
                table.column("first_seen", .double).notNull()
                table.column("last_seen", .double).notNull()
                // The price when this digest last reported the card (or first saw it), as
                // exact decimal text.
                table.column("price", .text)
                table.column("reported", .boolean).notNull().defaults(to: false)
                table.column("present", .boolean).notNull().defaults(to: true)
                // The card as last seen (JSON), to show a removal.
                table.column("card", .text).notNull()
                table.primaryKey(["digest", "card_id"])
            }
            try db.create(table: "digest_source") { table in
                table.column("digest", .text).notNull()
                table.column("source", .text).notNull()
                table.column("first_available", .double).notNull()
                table.primaryKey(["digest", "source"])
            }
            try db.create(table: "digest_run") { table in
                table.primaryKey("digest", .text)
                table.column("last_success", .double).notNull()
                table.column("runs", .integer).notNull()
            }
        }
        // A file delivery recorded in the same transaction as the state it reports, and
        // finished (then deleted) by this run or the next: exactly-once file output.
        migrator.registerMigration("v3: pending delivery") { db in
            try db.create(table: "digest_delivery") { table in
                table.primaryKey("digest", .text)
                table.column("path", .text).notNull()
                table.column("text", .text).notNull()
                table.column("created", .double).notNull()
            }
        }
        // `when:` states per card, and the reports owed to each `deliver:` target, written
        // in the same transaction as the state they report.
        migrator.registerMigration("v4: alerts and delivery targets") { db in
            try db.alter(table: "digest_item") { table in
                table.add(column: "holding", .text).notNull().defaults(to: "")
            }
            try db.create(table: "digest_outbox") { table in
                table.column("digest", .text).notNull()
                table.column("target", .text).notNull()
                table.column("report_id", .text).notNull()
                table.column("created", .double).notNull()
                table.column("payload", .text).notNull()
                table.primaryKey(["digest", "target", "report_id"])
            }
        }
        // `--output FILE` became a `file` target through the outbox: a file an earlier
        // version committed and did not finish writing is owed to that file's target.
        migrator.registerMigration("v5: file output through the outbox") { db in
            let pending = try Row.fetchAll(db, sql: "SELECT digest, path, text, created FROM digest_delivery")
            for row in pending {
                let body = try row.decode(String.self, forColumn: "text")
                try db.execute(sql: "INSERT OR IGNORE INTO digest_outbox (digest, target, report_id, created, payload) VALUES (?, ?, ?, ?, ?)",
                               arguments: [try row.decode(String.self, forColumn: "digest"),
                                           FileTarget.key(path: try row.decode(String.self, forColumn: "path")),
                                           UUID().uuidString.lowercased(), try row.decode(Double.self, forColumn: "created"),
                                           DeliveryPayload(body: body).text])
            }
            try db.drop(table: "digest_delivery")
        }
        SQLiteStateDirectory.dropsFirstSeenLog(&migrator)
        return SQLiteSchema(name: "digests", migrator: migrator)
    }()

    private var database: any DatabaseWriter {
        get throws { try directory.stateDatabase(Self.schema) }
    }

    public func withLock<T>(digest: String, wait: Double, _ body: (DigestLock) async throws -> T) async throws -> T {
        let lock: FileLock
        do {
            lock = try await FileLock.acquire(path: directory.directory.appendingPathComponent("digest-\(digest).lock").path, wait: wait)
        } catch is FileLock.Busy {
            throw DigestJob.Failure.busy(digest)
        }
        defer { withExtendedLifetime(lock) {} }
        return try await body(DigestLock(digest: digest))
    }

    public func memory(of digest: String, cards: [String: Card]) async throws -> DigestMemory {
        let path = directory.statePath
        return try await database.read { db in
            var memory = DigestMemory()
            for row in try Row.fetchAll(db, sql: "SELECT * FROM digest_item WHERE digest = ?", arguments: [digest]) {
                // Values of the wrong type are damage, said as such (GRDB's subscripts would
                // stop the process on them).
                do {
                    guard let card = StoredCard.card(try row.decode(String.self, forColumn: "card"),
                                                     id: try row.decode(String.self, forColumn: "card_id"), cards: cards) else { continue }
                    memory.entries[card.id] = DigestEntry(
                        card: card, firstSeen: Date(timeIntervalSince1970: try row.decode(Double.self, forColumn: "first_seen")),
                        lastSeen: Date(timeIntervalSince1970: try row.decode(Double.self, forColumn: "last_seen")),
                        price: StoredCard.price(try row.decode(String?.self, forColumn: "price")),
                        reported: try row.decode(Bool.self, forColumn: "reported"), present: try row.decode(Bool.self, forColumn: "present"),
                        holding: StoredCard.holding(try row.decode(String?.self, forColumn: "holding")))
                } catch let error as RowDecodingError {
                    throw SQLiteStateError.damaged(path: path, reason: "a row of digest \(digest) cannot be read: \(error)")
                }
            }
            memory.knownSources = Set(try String.fetchAll(db, sql: "SELECT source FROM digest_source WHERE digest = ?", arguments: [digest]))
            memory.lastSuccess = try Double.fetchOne(db, sql: "SELECT last_success FROM digest_run WHERE digest = ?", arguments: [digest])
                .map(Date.init(timeIntervalSince1970:))
            return memory
        }
    }

    public func commit(_ plan: DigestPlan, under lock: DigestLock, now: Date, outbox: [OutgoingReport]) async throws {
        let digest = lock.digest
        let rows = try plan.writes.map { entry in (entry, try StoredCard.text(entry, of: plan)) }
        try await database.write { db in
            for (entry, card) in rows {
                try db.execute(sql: """
                    INSERT INTO digest_item (digest, card_id, source, first_seen, last_seen, price, reported, present, card, holding)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(digest, card_id) DO UPDATE SET last_seen = excluded.last_seen, price = excluded.price,
                      reported = excluded.reported OR digest_item.reported, present = excluded.present, card = excluded.card,
                      holding = excluded.holding
                    """, arguments: [digest, entry.cardID, entry.source, entry.firstSeen.timeIntervalSince1970,
                                     entry.lastSeen.timeIntervalSince1970, entry.price.map { "\($0)" }, entry.reported,
                                     entry.present, card, StoredCard.holding(entry.holding)])
            }
            for report in outbox {
                try db.execute(sql: "INSERT OR REPLACE INTO digest_outbox (digest, target, report_id, created, payload) VALUES (?, ?, ?, ?, ?)",
                               arguments: [digest, report.target, report.reportID, report.created.timeIntervalSince1970, report.payload.text])
            }
            for source in plan.newlyKnownSources {
                try db.execute(sql: "INSERT OR IGNORE INTO digest_source (digest, source, first_available) VALUES (?, ?, ?)",
                               arguments: [digest, source, now.timeIntervalSince1970])
            }
            try db.execute(sql: """
                INSERT INTO digest_run (digest, last_success, runs) VALUES (?, ?, 1)
                ON CONFLICT(digest) DO UPDATE SET last_success = excluded.last_success, runs = digest_run.runs + 1
                """, arguments: [digest, now.timeIntervalSince1970])
        }
    }

    public func owed(by digest: String) async throws -> [OutgoingReport] {
        let path = directory.statePath
        return try await database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT target, report_id, created, payload FROM digest_outbox WHERE digest = ? ORDER BY created, rowid
                """, arguments: [digest]).map { row in
                do {
                    guard let payload = DeliveryPayload(text: try row.decode(String.self, forColumn: "payload")) else {
                        throw SQLiteStateError.damaged(path: path, reason: "a report owed by digest \(digest) cannot be read")
                    }
                    return OutgoingReport(target: try row.decode(String.self, forColumn: "target"),
                                          reportID: try row.decode(String.self, forColumn: "report_id"),
                                          created: Date(timeIntervalSince1970: try row.decode(Double.self, forColumn: "created")),
                                          payload: payload)
                } catch let error as RowDecodingError {
                    throw SQLiteStateError.damaged(path: path, reason: "a report owed by digest \(digest) cannot be read: \(error)")
                }
            }
        }
    }

    public func delivered(_ report: OutgoingReport, digest: String) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM digest_outbox WHERE digest = ? AND target = ? AND report_id = ?",
                           arguments: [digest, report.target, report.reportID])
        }
    }
}
