import FeedConfig
import FeedCore
import FeedFormats
import FeedSupport
import Foundation
import Synchronization

/// A source's pages as the source mapped them, remembered beside the cached responses
/// they were mapped from, so a warm run reads cards instead of decoding upstream JSON.
///
/// A remembered page is served only while every response it was read from is still the
/// very body in the cache (same `stored_at`: a 304 keeps it, a new 200 replaces it) and
/// still fresh; and only to a source with the same code and settings (``fingerprint``:
/// the binary, the plugin, the id, the URL and the options as written, which hold
/// `${VAR}` references rather than secret values, and the keyed hash of the URL and
/// headers as sent, so that another key is another source).
package struct PageMemo: Sendable {
    package let store: any PageMemoStore
    /// Where the responses a page was mapped from are stored, to check they still are.
    package let responses: any ResponseCache
    /// The source's `cache_ttl`: a page is served only while its responses are fresh.
    package let ttl: Double
    package let fingerprint: String
    /// The source's code and settings as written (``fingerprint`` without the keyed hash of
    /// what is sent): a listing's name (``LiveListing/tag``) is this and what its bodies
    /// hold, the same whichever cache (and its secret) they were read through.
    package let sourceFingerprint: String
    /// The run's cache writes: a page is remembered after the responses it names.
    package let writes: WriteBehind

    package init(store: any PageMemoStore, responses: any ResponseCache, source: SourceConfig, identity: RequestIdentity,
         writes: WriteBehind) {
        self.store = store
        self.responses = responses
        self.ttl = source.cacheTTL
        self.writes = writes
        var text = "\(BuildIdentity.current) \(CardBinaryCoding.layoutVersion)\n\(source.plugin)\n\(source.id)\n\(source.url.redactedString)\n"
        if let options = source.options { ConfigText.append(options, to: &text) }
        sourceFingerprint = String(FNV1a.hash(text), radix: 16)
        // The URL and headers as sent, hashed with the cache's key: a rotated key is
        // another source's pages, never this one's remembered ones.
        text += identity.tag(url: source.url, headers: source.headers)
        fingerprint = String(FNV1a.hash(text), radix: 16)
    }

    package func key(cursor: String?) -> String {
        "\(fingerprint) \(cursor.map { "after \($0)" } ?? "first")"
    }

    /// The remembered page after `cursor`: ``Remembered/fresh`` when every response it was
    /// read from is still the stored body and still fresh (it is served without a request);
    /// else, when it was read from one stored body, valid once a 304 confirms that body.
    /// Without `readingPage`, only what it was read from is read (``page(cursor:)`` reads
    /// the page when needed).
    package func lookup(cursor: String?, servesFresh: Bool = true, readingPage: Bool = true) async -> Remembered? {
        let key = key(cursor: cursor)
        var page: RememberedPage?
        let responses: [String: Double]
        if readingPage {
            guard let memo = try? await store.page(forKey: key), let opened = try? MappedPageCoding.open(memo.page) else { return nil }
            (page, responses) = (opened, memo.responses)
        } else {
            guard let read = try? await store.responses(forKey: key) else { return nil }
            responses = read
        }
        guard !responses.isEmpty else { return nil }
        if servesFresh, let digests = await freshDigests(responses) {
            return Remembered(fresh: true, readFrom: responses, digests: digests, page: page)
        }
        guard responses.count == 1 else { return nil }
        return Remembered(fresh: false, readFrom: responses, page: page)
    }

    /// The remembered page after `cursor`, whatever its validity, opened for reading.
    package func page(cursor: String?) async -> RememberedPage? {
        guard let memo = try? await store.page(forKey: key(cursor: cursor)) else { return nil }
        return try? MappedPageCoding.open(memo.page)
    }

    /// What the responses hold (``CacheStamp/digest``, where known) when every one is still
    /// the stored body and still fresh; nil when one is not.
    private func freshDigests(_ responses: [String: Double]) async -> [String: String]? {
        var digests: [String: String] = [:]
        for (responseKey, storedAt) in responses {
            guard let stamp = try? await self.responses.stamp(key: responseKey), stamp.storedAt == storedAt,
                  stamp.isFresh(ttl: ttl) else { return nil }
            digests[responseKey] = stamp.digest
        }
        return digests
    }

    /// What ``lookup(cursor:servesFresh:readingPage:)`` found.
    package struct Remembered: Sendable {
        /// Valid as it is; else valid once the upstream confirms that the one stored body
        /// it was read from is still its answer (mapping the same bytes again gives this page).
        package var fresh: Bool
        /// The stored bodies it was mapped from, by cache key, with their `storedAt` stamps.
        package var readFrom: [String: Double]
        /// What those bodies hold, where the stamps say (read only for a fresh page; a
        /// confirmed one learns them from the transport that confirmed it).
        package var digests: [String: String] = [:]
        /// Opened for reading; nil when not read.
        package var page: RememberedPage?
    }

    /// Remembers `page`, mapped from `readFrom` (the stored bodies its call read, with
    /// their stamps): encoded and written behind the run, after the writes of those bodies.
    package func remember(_ page: SourcePage, cursor: String?, readFrom stamps: [String: Double]) {
        guard !stamps.isEmpty else { return }
        writes.remember(page, key: key(cursor: cursor), readFrom: stamps)
    }
}

/// A configuration value as canonical text, for fingerprints.
package enum ConfigText {
    package static func append(_ node: ConfigNode, to text: inout String) {
        switch node.value {
        case .scalar(let scalar): text += "s\(scalar.text.utf8.count):\(scalar.text)"
        case .list(let items):
            text += "["
            for item in items { append(item, to: &text) }
            text += "]"
        case .map(let entries):
            text += "{"
            for entry in entries {
                text += "k\(entry.key.utf8.count):\(entry.key)"
                append(entry.value, to: &text)
            }
            text += "}"
        }
    }
}

/// A ``SourcePage`` as stored: what is known of the page first, then its cards in
/// ``CardBinaryCoding``'s layout, so a run can read as many cards as it needs.
package enum MappedPageCoding {
    package static func encode(_ page: SourcePage) -> Data {
        var writer = BinaryWriter()
        writer.optionalString(page.next)
        writer.flag(page.total != nil)
        if let total = page.total { writer.int(total) }
        writer.int(page.skipped.count)
        for record in page.skipped {
            writer.string(record.path)
            writer.string(record.reason)
        }
        writer.int(page.notes.count)
        for note in page.notes { writer.string(note) }
        writer.int(page.cards.count)
        let shared = SharedPrefixes(of: page.cards)
        shared.write(into: &writer)
        for card in page.cards { CardBinaryCoding.encode(card, sharing: shared, into: &writer) }
        return Data(writer.bytes)
    }

    /// Reads what is known of the page; its cards are read by ``RememberedPage/take(_:)``.
    static func open(_ data: Data) throws(BinaryReader.Malformed) -> RememberedPage {
        var reader = BinaryReader(Array(data))
        let next = try reader.optionalString()
        let total = try reader.flag() ? try reader.int() : nil
        var skipped: [SkippedRecord] = []
        for _ in 0..<(try reader.count()) { skipped.append(SkippedRecord(path: try reader.string(), reason: try reader.string())) }
        var notes: [String] = []
        for _ in 0..<(try reader.count()) { notes.append(try reader.string()) }
        let count = try reader.count()
        let shared = try SharedPrefixes(from: &reader)
        return RememberedPage(next: next, total: total, skipped: skipped, notes: notes, remaining: count, shared: shared, reader: reader)
    }

    /// The whole page at once.
    package static func decode(_ data: Data) throws(BinaryReader.Malformed) -> SourcePage {
        var page = try open(data)
        let cards = try page.take(page.remaining)
        guard page.isFullyRead else { throw .malformed }
        return SourcePage(cards: cards, next: page.next, total: page.total, skipped: page.skipped, notes: page.notes)
    }
}

/// A remembered page being read: a warm first page of a 5,000-card source needs its
/// first few cards, not all of them (decoding them all was a fifth of a warm run).
package struct RememberedPage: Sendable {
    package let next: String?
    package let total: Int?
    package let skipped: [SkippedRecord]
    package let notes: [String]
    /// Cards not read yet.
    package private(set) var remaining: Int
    /// Cards read so far.
    package private(set) var taken = 0
    private let shared: SharedPrefixes
    private var reader: BinaryReader

    package init(next: String?, total: Int?, skipped: [SkippedRecord], notes: [String], remaining: Int, shared: SharedPrefixes,
                 reader: BinaryReader) {
        self.next = next
        self.total = total
        self.skipped = skipped
        self.notes = notes
        self.remaining = remaining
        self.shared = shared
        self.reader = reader
    }

    /// Every card read and nothing left over.
    package var isFullyRead: Bool { remaining == 0 && reader.remaining == 0 }

    /// The next `limit` cards (fewer at the end).
    package mutating func take(_ limit: Int) throws(BinaryReader.Malformed) -> [Card] {
        let count = min(limit, remaining)
        var cards: [Card] = []
        cards.reserveCapacity(count)
        for _ in 0..<count { cards.append(try CardBinaryCoding.decodeCard(from: &reader, sharing: shared)) }
        remaining -= count
        taken += count
        if remaining == 0 && reader.remaining != 0 { throw .malformed }
        return cards
    }
}
