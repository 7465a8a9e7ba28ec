import Foundation
import GRDB

extension SQLiteStateDirectory {
    /// The files that must not be lost: the digests' memory and accounts, and the card
    /// store with its marks.
    static let stateFiles = ["state.sqlite", "cards.sqlite"]

    /// Moves the state an earlier version kept in `old` (the cache directory) into `new`,
    /// when `new` holds none yet: each database is checkpointed (its write-ahead log
    /// folded in) and moved whole. Returns what to tell the user, or nil when there was
    /// nothing to move. A process still running from the old place (a `serve` not yet
    /// restarted after the upgrade) should be stopped first; the docs say so.
    static func moveState(from old: URL, to new: URL) throws -> String? {
        let files = FileManager.default
        guard !stateFiles.contains(where: { files.fileExists(atPath: new.appendingPathComponent($0).path) }) else { return nil }
        let found = stateFiles.filter { files.fileExists(atPath: old.appendingPathComponent($0).path) }
        guard !found.isEmpty else { return nil }
        for name in found {
            let from = old.appendingPathComponent(name).path
            let queue = try DatabaseQueue(path: from)
            _ = try queue.writeWithoutTransaction { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try queue.close()
            // The log and the index of shared memory go with it when still there; the
            // database itself last, so a file found in `new` is whole.
            for suffix in ["-wal", "-shm", ""] where files.fileExists(atPath: from + suffix) {
                try files.moveItem(atPath: from + suffix, toPath: new.appendingPathComponent(name).path + suffix)
            }
        }
        return "aggregate: moved the state (accounts, marks, digests, the card store: \(found.joined(separator: ", "))) "
            + "from \(old.path) to \(new.path), where state belongs; the HTTP cache stays in \(old.path)"
    }
}
