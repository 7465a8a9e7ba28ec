import FeedCore
import FeedEngine
import Foundation
import GRDB

/// A rendered digest owed to a file.
struct PendingDelivery: Sendable, Equatable {
    var path: String
    var text: String
}

/// What one digest remembers between runs.
struct DigestMemory {
    var entries: [String: DigestEntry] = [:]
    var knownSources: Set<String> = []
    var lastSuccess: Date?
}

extension StateStore {
    func digestMemory(_ name: String) async throws -> DigestMemory {
        try await database.read { db in
            var memory = DigestMemory()
            let decoder = JSONDecoder()
            for row in try Row.fetchAll(db, sql: "SELECT * FROM digest_item WHERE digest = ?", arguments: [name]) {
                let json: String = row["card"]
                // A row whose card no longer decodes is forgotten (seen as new once more).
                guard let card = try? decoder.decode(Card.self, from: Data(json.utf8)) else { continue }
                let price: String? = row["price"]
                memory.entries[card.id] = DigestEntry(
                    card: card, firstSeen: Date(timeIntervalSince1970: row["first_seen"]),
                    lastSeen: Date(timeIntervalSince1970: row["last_seen"]),
                    price: price.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) },
                    reported: row["reported"], present: row["present"])
            }
            memory.knownSources = Set(try String.fetchAll(db, sql: "SELECT source FROM digest_source WHERE digest = ?", arguments: [name]))
            memory.lastSuccess = try Double.fetchOne(db, sql: "SELECT last_success FROM digest_run WHERE digest = ?", arguments: [name])
                .map(Date.init(timeIntervalSince1970:))
            return memory
        }
    }

    /// Writes the plan's state in one transaction: all of it, or (on any error) none;
    /// with `delivery`, the file to write is recorded in that same transaction.
    func commit(_ plan: DigestPlan, digest name: String, now: Date, delivery: PendingDelivery? = nil) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let rows = try plan.writes.map { entry in
            (entry, String(decoding: try encoder.encode(entry.card), as: UTF8.self))
        }
        try await database.write { db in
            for (entry, card) in rows {
                try db.execute(sql: """
                    INSERT INTO digest_item (digest, card_id, source, first_seen, last_seen, price, reported, present, card)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(digest, card_id) DO UPDATE SET last_seen = excluded.last_seen, price = excluded.price,
                      reported = excluded.reported OR digest_item.reported, present = excluded.present, card = excluded.card
                    """, arguments: [name, entry.cardID, entry.source, entry.firstSeen.timeIntervalSince1970,
                                     entry.lastSeen.timeIntervalSince1970, entry.price.map { "\($0)" }, entry.reported,
                                     entry.present, card])
            }
            for source in plan.newlyKnownSources {
                try db.execute(sql: "INSERT OR IGNORE INTO digest_source (digest, source, first_available) VALUES (?, ?, ?)",
                               arguments: [name, source, now.timeIntervalSince1970])
            }
            try db.execute(sql: """
                INSERT INTO digest_run (digest, last_success, runs) VALUES (?, ?, 1)
                ON CONFLICT(digest) DO UPDATE SET last_success = excluded.last_success, runs = digest_run.runs + 1
                """, arguments: [name, now.timeIntervalSince1970])
            if let delivery {
                try db.execute(sql: "INSERT OR REPLACE INTO digest_delivery (digest, path, text, created) VALUES (?, ?, ?, ?)",
                               arguments: [name, delivery.path, delivery.text, now.timeIntervalSince1970])
            }
        }
    }

    /// The file delivery a run committed but may not have finished.
    func pendingDelivery(_ name: String) async throws -> PendingDelivery? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT path, text FROM digest_delivery WHERE digest = ?", arguments: [name])
                .map { PendingDelivery(path: $0["path"], text: $0["text"]) }
        }
    }

    func finishDelivery(_ name: String) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM digest_delivery WHERE digest = ?", arguments: [name])
        }
    }
}
