import FeedState
import Foundation
import GRDB
import Synchronization
import SystemPackage

/// The embedded state: two SQLite files in one private directory (0700, files 0600).
/// `cache.sqlite` holds the HTTP cache and is disposable (a damaged one is moved aside
/// and started afresh); `state.sqlite` holds what must not be lost (the digests' memory,
/// first-seen dates) and a damaged one is refused with how to recover. WAL mode, so
/// several processes read while one writes; a busy timeout so a second writer waits;
/// every write is one transaction, so a process killed mid-write leaves the last
/// committed state. Each module migrates its own tables (``SQLiteSchema``).
public final class SQLiteStateDirectory: Sendable {
    public let directory: URL
    /// Where `cache.sqlite` and its bodies are: `directory`, or a cache directory of their own.
    public let cacheDirectory: URL
    /// `state.sqlite`.
    public let statePath: String
    /// How this process connects to each file.
    public let connections: StateConnections
    /// The HTTP cache, `cache.sqlite`.
    let cacheDatabase: any DatabaseWriter
    private let state = Mutex<(database: (any DatabaseWriter)?, migrated: Set<String>)>((nil, []))
    /// `cards.sqlite`: the card store, opened on first use.
    public let cardsPath: String
    private let cards = Mutex<(any DatabaseWriter)?>(nil)
    /// Things the caller should tell the user (a damaged cache moved aside).
    public let notices: [String]

    /// Opens (creating on first use) the cache in `directory`; `state.sqlite` is opened on
    /// first use.
    /// With `cache`, the HTTP cache goes there; state that an earlier version kept there
    /// (before the state moved out of the cache directory) is moved into `directory` first,
    /// once, and a notice says so.
    public init(directory: URL, cache: URL? = nil, connections: StateConnections = .one) throws {
        self.directory = directory
        let cacheDirectory = cache ?? directory
        self.cacheDirectory = cacheDirectory
        self.connections = connections
        let shared = try PrivateFiles.directory(directory)
        statePath = directory.appendingPathComponent("state.sqlite").path
        cardsPath = directory.appendingPathComponent("cards.sqlite").path
        var notices: [String] = shared.map { [$0] } ?? []
        if cacheDirectory.standardizedFileURL != directory.standardizedFileURL {
            if let shared = try PrivateFiles.directory(cacheDirectory) { notices.append(shared) }
            if let moved = try Self.moveState(from: cacheDirectory, to: directory) { notices.append(moved) }
        }
        let cachePath = cacheDirectory.appendingPathComponent("cache.sqlite").path
        do {
            cacheDatabase = try Self.openCache(cachePath, connections: connections)
        } catch {
            // The cache is disposable: whatever makes it unusable (a damaged file, a table
            // gone, something that is not a database file at all) is moved aside.
            guard let damage = Self.cacheDamage(error, path: cachePath) else { throw error }
            // A name no earlier repair took (two within one second would collide).
            let stamp = cachePath + ".corrupt-" + String(Int(Date().timeIntervalSince1970))
            var aside = stamp
            var attempt = 1
            while FileManager.default.fileExists(atPath: aside) {
                attempt += 1
                aside = "\(stamp)-\(attempt)"
            }
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: cachePath + suffix) {
                try FileManager.default.moveItem(atPath: cachePath + suffix, toPath: aside + suffix)
            }
            notices.append("aggregate: the cache \(cachePath) was damaged (\(damage)); moved it to \(aside) and started a fresh one")
            cacheDatabase = try Self.openCache(cachePath, connections: connections)
        }
        self.notices = notices
    }

    /// Registers, after `migrator`'s own, the removal of the first-seen log earlier versions
    /// kept in `state.sqlite` (the card store keeps first seen now; the log only grew). Each
    /// schema of that file registers it under one identifier, so whichever migrates first
    /// drops the table and the others find it done.
    public static func dropsFirstSeenLog(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("state: the first-seen log dropped") { db in
            try db.execute(sql: "DROP TABLE IF EXISTS first_seen")
        }
    }

    /// `state.sqlite` with `schema`'s tables migrated. A damaged file throws
    /// ``SQLiteStateError/damaged(path:reason:)`` and is left untouched: it is the only
    /// record of what was already reported.
    public func stateDatabase(_ schema: SQLiteSchema) throws -> any DatabaseWriter {
        try state.withLock { state in
            do {
                let database: any DatabaseWriter
                if let opened = state.database {
                    database = opened
                } else {
                    database = try Self.open(statePath, schema: nil, connections: connections)
                    try database.read { db in
                        let check = try String.fetchOne(db, sql: "PRAGMA quick_check(1)") ?? "ok"
                        if check != "ok" { throw SQLiteStateError.damaged(path: statePath, reason: check) }
                    }
                    state.database = database
                }
                if !state.migrated.contains(schema.name) {
                    try Self.migrate(database, path: statePath, schema: schema)
                    state.migrated.insert(schema.name)
                }
                return database
            } catch let error as DatabaseError where Self.isDamage(error) {
                throw SQLiteStateError.damaged(path: statePath, reason: error.message ?? "\(error.resultCode)")
            }
        }
    }

    /// `cards.sqlite` with `schema`'s tables migrated: the card store, in a file of its own
    /// because it grows large (a million cards) and a run that only records a few must not
    /// read all of it (`state.sqlite` is checked whole when opened). Damage shows as an
    /// error when a page is read, naming the file.
    public func cardDatabase(_ schema: SQLiteSchema) throws -> any DatabaseWriter {
        try cards.withLock { opened in
            if let opened { return opened }
            do {
                // Cards are read a page of rows at a time, by index: 8 KiB pages, not the
                // 64 KiB that suit bodies (a page of a million-card store read 35 MB).
                let database = try Self.open(cardsPath, schema: schema, connections: connections, pageSize: 8192, cacheKiB: 32768)
                opened = database
                return database
            } catch let error as DatabaseError where Self.isDamage(error) {
                throw SQLiteStateError.damagedCardStore(path: cardsPath, reason: error.message ?? "\(error.resultCode)")
            }
        }
    }

    /// The cache database, checked for the tables its schema made (one could have been
    /// dropped by hand, and migrations recorded as done never make it again).
    private static func openCache(_ path: String, connections: StateConnections) throws -> any DatabaseWriter {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw CacheDamage.notAFile("a directory stands where the database file goes")
        }
        let database = try open(path, schema: SQLiteResponseCache.schema, connections: connections)
        try database.read { db in
            for table in SQLiteResponseCache.tables where try !db.tableExists(table) {
                throw CacheDamage.missingTable(table)
            }
        }
        return database
    }

    private enum CacheDamage: Error {
        case notAFile(String)
        case missingTable(String)
    }

    /// What made the cache at `path` unusable, in words, when it is damage to repair.
    private static func cacheDamage(_ error: any Error, path: String) -> String? {
        switch error {
        case CacheDamage.notAFile(let what): what
        case CacheDamage.missingTable(let table): "its table \(table) is missing"
        case let error as DatabaseError where isDamage(error): error.message ?? "\(error.resultCode)"
        default: nil
        }
    }

    static func isDamage(_ error: DatabaseError) -> Bool {
        [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode)
    }

    /// GRDB checks which migrations are applied outside their transactions, and two
    /// processes switching a new file to WAL race; a file lock makes opening and migrating
    /// one process at a time (it is held for milliseconds).
    private static func open(_ path: String, schema: SQLiteSchema?, connections: StateConnections,
                             pageSize: Int = 65536, cacheKiB: Int = 512) throws -> any DatabaseWriter {
        let lock = try FileLock(path: path + ".open-lock", wait: 30)
        defer { withExtendedLifetime(lock) {} }
        try PrivateFiles.file(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        configuration.label = "aggregate-state"
        configuration.prepareDatabase { db in
            // Bodies of many megabytes are the norm: 64 KiB pages write one in a sixteenth of
            // the calls (only a new file takes it; an existing one keeps its size).
            try db.execute(sql: "PRAGMA page_size = \(pageSize)")
            // SQLite copies the log into the file every 1,000 pages: 64 MiB at this page
            // size, more than a whole run writes, so the copy fell to the last close, after
            // the output, on the run's clock. At 16 MiB it happens while the run works.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 256")
            // The page cache, per connection. The HTTP cache's bodies are written once and
            // read once, so its cache holds little worth keeping: at 32 MiB a cold run of 500
            // pages kept 32 MiB of bodies in it, and 512 KiB (8 pages) left 1.2 MiB less at
            // the peak of the html job than SQLite's 2 MiB, in the same time. (SQLite's first
            // allocation of a cache is still 20 pages, made before this line takes effect.)
            // The card store gets 32 MiB: recording 25,000 cards
            // walked its indexes through 2 MiB and read 151,000 pages from the kernel (most of
            // the time of a `refresh` of 500 feeds). A cache grows only as far as a run
            // touches pages.
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            // A statement that may fail half-way keeps the pages it changes in a statement
            // journal, a temporary file by default: recording 25,000 cards, 100 rows per
            // upsert, wrote 431 MB to one in /var/tmp. In memory it is a copy, not a write.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        let database: any DatabaseWriter
        switch connections {
        case .pool:
            // Reads are sub-millisecond lookups by key; each extra reader is a connection to open.
            configuration.maximumReaderCount = 2
            database = try DatabasePool(path: path, configuration: configuration)
        case .one:
            // GRDB's WAL set-up writes a throwaway table whenever the -wal file is missing
            // (SQLite deletes it at the last close), so that a pool's readers find one; the
            // checkpoint of that write at exit was four fsyncs in a warm run that writes
            // nothing. One connection needs none of it: WAL is kept in the file, set once.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            database = try DatabaseQueue(path: path, configuration: configuration)
            try database.writeWithoutTransaction { db in
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                    try db.execute(sql: "PRAGMA journal_mode = WAL")
                }
            }
        }
        // Every run after the first finds the file migrated: a read says so, where
        // migrating would open a write transaction (and a checkpoint at exit) to do nothing.
        if let schema, try !database.read(schema.migrator.hasCompletedMigrations) { try schema.migrator.migrate(database) }
        return database
    }

    private static func migrate(_ database: any DatabaseWriter, path: String, schema: SQLiteSchema) throws {
        let lock = try FileLock(path: path + ".open-lock", wait: 30)
        defer { withExtendedLifetime(lock) {} }
        try schema.migrator.migrate(database)
    }
}

/// One module's tables in a state file, and their migrations. Migration identifiers are
/// global to the file: each module prefixes its own (the first ones predate the rule and
/// keep their names so existing files are not migrated twice).
public struct SQLiteSchema: Sendable {
    public let name: String
    public let migrator: DatabaseMigrator

    public init(name: String, migrator: DatabaseMigrator) {
        self.name = name
        self.migrator = migrator
    }
}

/// Why the embedded state could not be used.
public enum SQLiteStateError: Error, Sendable, CustomStringConvertible {
    /// `state.sqlite`, the digests' memory.
    case damaged(path: String, reason: String)
    /// `cards.sqlite`, the card store.
    case damagedCardStore(path: String, reason: String)

    public var description: String {
        switch self {
        case .damaged(let path, let reason):
            "\(path) is damaged (\(reason)). It holds the digests' memory, so it is not replaced: restore it from a backup, or move it aside (mv \(path) \(path).bak) and the next digest run records a fresh baseline"
        case .damagedCardStore(let path, let reason):
            "\(path) is damaged (\(reason)). It holds the card store, so it is not replaced: restore it from a backup, or move it aside (mv \(path) \(path).bak) and the next refresh records what the sources list now (the history starts again)"
        }
    }
}

/// State files are private: a directory made here is 0700, a file 0600 (they hold cached
/// responses that may be personal, and the digests' memory). What exists already keeps
/// its mode: a shared folder (`state: .`, a sticky `/tmp`-like folder) is the user's, and
/// a symlink's target is never touched.
enum PrivateFiles {
    /// Creates `url` (and missing parents) 0700 when it does not exist. For one that does,
    /// returns a warning when others may read it; its mode is left as it is.
    @discardableResult
    static func directory(_ url: URL) throws -> String? {
        // swift-system's stat (it follows a symlink, as the state does): FileManager's
        // attributes look up the owner's and group's names too, on every run.
        if let stat = try? Stat(FilePath(url.path)), stat.type == .directory {
            let mode = Int(stat.permissions.rawValue)
            guard mode & 0o077 != 0 else { return nil }
            return "aggregate: warning: \(url.path) can be read by other users (mode \(String(mode, radix: 8))); "
                + "the cache may hold responses fetched with your keys: choose a private --state-dir, or chmod 700 it"
        }
        // Parents as the system makes them; the folder itself made 0700 in one step (made
        // and then chmodded, another process could see it open in between).
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if mkdir(url.path, 0o700) != 0 && errno != EEXIST {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return nil
    }

    /// Creates `path` 0600 if missing (SQLite gives its -wal and -shm files the same mode).
    static func file(_ path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
    }
}
