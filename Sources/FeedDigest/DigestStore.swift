import FeedCore
import FeedEngine
import FeedState
import FeedStatePostgres
import FeedStateSQLite
import Foundation
import PostgresNIO

/// Where digests remember what they reported: per digest, the cards seen, the sources
/// known (a source's first appearance is a baseline), the last success, and the reports
/// owed to delivery targets (`deliver:`, and the file of `--output`). Implementations: ``InMemoryDigestStore`` (tests), ``SQLiteDigestStore``
/// (one machine), ``PostgresDigestStore`` (shared by hosts).
public protocol DigestStore: Sendable {
    /// Runs `body` holding the digest's lock: one run of a digest at a time across every
    /// process (and host) sharing this store; other digests run in parallel. Throws
    /// ``DigestJob/Failure/busy(_:)`` when another run held it for `wait` seconds. The
    /// lock is handed to `body`: commits go through it.
    func withLock<T>(digest: String, wait: Double, _ body: (DigestLock) async throws -> T) async throws -> T
    /// What `digest` remembers (empty on its first run). An entry whose card the card
    /// store keeps (its row holds no copy, ``DigestPlan/cardStoreHolds``) takes it from
    /// `cards`, the card store's cards of the digest's sources; one it cannot find there
    /// (retention removed it) is forgotten, as a damaged row is: seen as new once more.
    func memory(of digest: String, cards: [String: Card]) async throws -> DigestMemory
    /// Writes the plan's state of the locked digest in one transaction: all of it or, on
    /// any error, none; every report of `outbox` (owed to a `deliver:` target or to the file
    /// of `--output`) is recorded in that same transaction. Where
    /// the lock lives on a connection (PostgreSQL), the transaction runs on that connection:
    /// a lock lost with it loses the commit too, never lets it land beside another holder.
    func commit(_ plan: DigestPlan, under lock: DigestLock, now: Date, outbox: [OutgoingReport]) async throws
    /// The reports owed to `deliver:` targets, oldest first.
    func owed(by digest: String) async throws -> [OutgoingReport]
    /// Forgets a report once its target has it: it is never sent to that target again.
    func delivered(_ report: OutgoingReport, digest: String) async throws
}

/// One digest's lock, held: given to the body of ``DigestStore/withLock(digest:wait:_:)``
/// and to every commit made under it.
public struct DigestLock: Sendable {
    /// The digest locked.
    public let digest: String
    /// The PostgreSQL connection holding the advisory lock; nil where a file or memory
    /// holds it.
    let connection: PostgresConnection?

    init(digest: String, connection: PostgresConnection? = nil) {
        self.digest = digest
        self.connection = connection
    }
}

/// A report owed to one `deliver:` target: the exact request body (and headers) it gets,
/// made once when the report was committed, so a retry sends the same bytes.
public struct OutgoingReport: Sendable, Equatable {
    /// The target's ``DeliveryTargetConfig/key``.
    public var target: String
    /// The same for every target of one report; the `Idempotency-Key` it is sent with.
    public var reportID: String
    public var created: Date
    public var payload: DeliveryPayload

    public init(target: String, reportID: String, created: Date, payload: DeliveryPayload) {
        self.target = target
        self.reportID = reportID
        self.created = created
        self.payload = payload
    }
}

/// What a target is sent: the body, and for webhooks the headers that go with it.
public struct DeliveryPayload: Sendable, Equatable, Codable {
    public var body: String
    public var headers: [String: String]

    public init(body: String, headers: [String: String] = [:]) {
        self.body = body
        self.headers = headers
    }

    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Nil when the stored text does not decode (damage): said by the store.
    init?(text: String) {
        guard let payload = try? JSONDecoder().decode(DeliveryPayload.self, from: Data(text.utf8)) else { return nil }
        self = payload
    }
}

/// What one digest remembers between runs.
public struct DigestMemory: Sendable, Equatable {
    public var entries: [String: DigestEntry] = [:]
    public var knownSources: Set<String> = []
    public var lastSuccess: Date?

    public init(entries: [String: DigestEntry] = [:], knownSources: Set<String> = [], lastSuccess: Date? = nil) {
        self.entries = entries
        self.knownSources = knownSources
        self.lastSuccess = lastSuccess
    }
}

/// The card of a stored entry as text, and back: the same JSON in every store.
enum StoredCard {
    /// What a row holds for a card the card store keeps: no copy.
    static let keptInCardStore = ""

    /// The text a row of `plan` holds for `entry`: nothing when the card store keeps its card.
    static func text(_ entry: DigestEntry, of plan: DigestPlan) throws -> String {
        plan.cardStoreHolds.contains(entry.cardID) ? keptInCardStore : try text(entry.card)
    }

    /// The card of a row: its own copy, else the card store's.
    static func card(_ text: String, id: String, cards: [String: Card]) -> Card? {
        text == keptInCardStore ? cards[id] : card(text)
    }

    static func text(_ card: Card) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(card), as: UTF8.self)
    }

    /// Nil when the stored card no longer decodes: the entry is forgotten (seen as new once
    /// more) rather than failing the digest.
    static func card(_ text: String) -> Card? {
        try? JSONDecoder().decode(Card.self, from: Data(text.utf8))
    }

    static func price(_ text: String?) -> Decimal? {
        text.flatMap { Decimal(plainText: $0) }
    }

    /// The `holding` set as stored: names separated by newlines (no name has one).
    static func holding(_ set: Set<String>) -> String {
        set.sorted().joined(separator: "\n")
    }

    static func holding(_ text: String?) -> Set<String> {
        Set((text ?? "").split(separator: "\n").map(String.init))
    }
}

/// A state backend that keeps digests: every built-in one does (SQLite, PostgreSQL, memory).
public protocol DigestStoreProvider: StateBackend {
    /// The digest store in this backend. In memory each call gives a new, empty store:
    /// keep the one you get for as long as you need it.
    func digestStore() -> any DigestStore
}

extension SQLiteState: DigestStoreProvider {
    public func digestStore() -> any DigestStore { SQLiteDigestStore(directory) }
}

extension PostgresState: DigestStoreProvider {
    public func digestStore() -> any DigestStore { PostgresDigestStore(database) }
}

extension InMemoryState: DigestStoreProvider {
    public func digestStore() -> any DigestStore { InMemoryDigestStore() }
}

extension EngineState {
    /// The digest store in the same place as this state; nil for a backend that keeps no
    /// digests.
    public var digestStore: (any DigestStore)? {
        (backend as? any DigestStoreProvider)?.digestStore()
    }
}
