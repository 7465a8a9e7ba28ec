import Foundation
import HTTPTypes
import NIOCore
import Synchronization

/// A response rendered once and kept as bytes: both encodings, their validators, and the
/// version of every source it was built from.
package struct RenderedResponse: Sendable {
    package var body: ByteBuffer
    package var gzip: ByteBuffer?
    package var etag: String
    package var gzipETag: String
    package var contentType: String
    package var lastModified: Date?
    package var maxAge: Int?
    package var degraded: String?
    /// What a reader is told instead (a 502 problem): kept as briefly as the rest.
    package var status: Int = 200
    /// The sources it was built from and their versions then.
    package var versions: [String: Int]
    /// The headers of each encoding, made once.
    package var headers: HTTPFields = [:]
    package var gzipHeaders: HTTPFields = [:]
    /// The bytes its buffers hold: their storage's capacity, which NIO rounds up to a
    /// power of two, not their readable bytes.
    package var heldBytes: Int = 0
    /// A person's page (``PersonalPages``): where its body has the stand-in of a form token.
    package var tokenOffsets: [Int] = []

    package init(body: ByteBuffer, gzip: ByteBuffer? = nil, etag: String, gzipETag: String, contentType: String, lastModified: Date? = nil, maxAge: Int? = nil, degraded: String? = nil, status: Int = 200, versions: [String: Int], headers: HTTPFields = [:], gzipHeaders: HTTPFields = [:], heldBytes: Int = 0, tokenOffsets: [Int] = []) {
        self.body = body
        self.gzip = gzip
        self.etag = etag
        self.gzipETag = gzipETag
        self.contentType = contentType
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.degraded = degraded
        self.status = status
        self.versions = versions
        self.headers = headers
        self.gzipHeaders = gzipHeaders
        self.heldBytes = heldBytes
        self.tokenOffsets = tokenOffsets
    }
}

/// The rendered-response cache of `serve`: where rendered responses are kept between
/// requests. One small seam, like the response cache and the digest store; the process
/// keeps them in memory (``InMemoryRenderedResponses``).
package protocol RenderedResponseCache: Sendable {
    /// The response for `key` if it is still built from the current version of every
    /// source it read; else renders it with `render`, once however many readers ask at
    /// the same time, and keeps it. A kept response whose sources moved only by another
    /// writer (``SourceVersions/moveSoftly(_:)``) is answered at once while it is rendered
    /// again beside the request.
    func response(for key: String, versions: SourceVersions,
                  render: @escaping @Sendable () async -> RenderedResponse) async -> (RenderedResponse, hit: Bool)
    /// The kept response for `key`, if it is still current, or answered as it was while it
    /// is rendered again (its sources moved softly): no rendering, no waiting.
    func kept(_ key: String, versions: SourceVersions) -> RenderedResponse?
    /// Forgets every response built from `source` (its data changed).
    func invalidate(source: String) async
}

/// Rendered responses in memory, at most `limit` bytes of them. Single-flight: fifty
/// readers of a cold URL wait for one rendering. A kept answer is found under a lock,
/// without a hop to another executor.
///
/// Eviction is CLOCK (second chance), the usual approximation of least-recently-used:
/// keys sit in a ring in the order they were kept; a hit only sets the entry's
/// `referenced` bit; to make room, a hand walks the ring, clearing set bits and evicting
/// the first entry whose bit is clear. Each step is O(1) and each entry is passed at most
/// twice per eviction, where sorting every entry by last use under the lock took 100 ms
/// per new entry at 25,000 of them. Bytes are counted as held: both buffers' capacity
/// (not their readable bytes), the key, the headers, and a fixed overhead per entry.
package final class InMemoryRenderedResponses: RenderedResponseCache {
    private struct Entry {
        package var response: RenderedResponse
        package var size: Int
        package var referenced = false
    }

    private struct State {
        package var entries: [String: Entry] = [:]
        package var rendering: [String: Task<RenderedResponse, Never>] = [:]
        package var bytes = 0
        /// Keys in the order kept; a key whose entry is gone is skipped (and dropped).
        package var ring: [String] = []
        package var hand = 0

        /// Evicts until `bytes` is within `limit`.
        package mutating func evict(toFit limit: Int) {
            while bytes > limit, !entries.isEmpty {
                if hand >= ring.count { compact() }
                let key = ring[hand]
                guard let entry = entries[key] else {
                    hand += 1
                    continue
                }
                if entry.referenced {
                    entries[key]?.referenced = false
                    hand += 1
                } else {
                    entries[key] = nil
                    bytes -= entry.size
                    hand += 1
                }
            }
            if ring.count > 2 * entries.count + 64 { compact() }
        }

        /// The ring without keys whose entries are gone, the hand back at its start.
        package mutating func compact() {
            ring = ring.filter { entries[$0] != nil }
            hand = 0
        }
    }

    private let state = Mutex(State())
    package let limit: Int
    /// Where responses rendered again beside their readers take their turn, one at a time.
    private let besideReaders = RequestSlots(count: 1)

    /// 64 MiB: thousands of feeds of 50 entries.
    package static let defaultLimit = 64 << 20
    /// What an entry costs beyond its buffers, key and headers: the dictionary slot, the
    /// ring slot, the response's strings and versions.
    package static let entryOverhead = 512

    package init(limit: Int = defaultLimit) {
        self.limit = limit
    }

    /// The bytes `response` holds under `key`.
    package static func footprint(key: String, response: RenderedResponse) -> Int {
        let headers = (response.headers + response.gzipHeaders).reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 32 }
        return response.heldBytes + key.utf8.count + headers + entryOverhead
    }

    package func kept(_ key: String, versions: SourceVersions) -> RenderedResponse? {
        state.withLock { state in
            // A response whose sources moved softly is answered as it was while it is being
            // rendered again: here too, so that its readers meanwhile are answered on the
            // connection's event loop, not queued behind the renderings.
            guard let entry = state.entries[key],
                  versions.current(entry.response.versions)
                    || (state.rendering[key] != nil && versions.servable(entry.response.versions))
            else { return nil }
            if !entry.referenced { state.entries[key]?.referenced = true }
            return entry.response
        }
    }

    package func response(for key: String, versions: SourceVersions,
                  render: @escaping @Sendable () async -> RenderedResponse) async -> (RenderedResponse, hit: Bool) {
        if let kept = kept(key, versions: versions) { return (kept, true) }
        let (task, stale, joined) = state.withLock { state -> (Task<RenderedResponse, Never>, RenderedResponse?, Bool) in
            let stale = state.entries[key].map(\.response).flatMap { versions.servable($0.versions) ? $0 : nil }
            if let task = state.rendering[key] { return (task, stale, true) }
            // The rendering keeps what it made itself: a stale answer does not wait for it.
            // Renderings beside readers go one at a time: a purge elsewhere moves every page
            // at once, and sixty renderings queued on the two cooperative threads held up
            // the requests behind them, which had answers ready.
            let task = Task {
                let response = stale == nil ? await render() : await self.besideReaders.run { await render() }
                self.keep(response, for: key, versions: versions)
                return response
            }
            state.rendering[key] = task
            return (task, stale, false)
        }
        if let stale { return (stale, true) }
        return (await task.value, joined)
    }

    /// Keeps `response` under `key` while every source is still at the version it was
    /// rendered from, and ends its rendering.
    private func keep(_ response: RenderedResponse, for key: String, versions: SourceVersions) {
        let size = Self.footprint(key: key, response: response)
        state.withLock { state in
            state.rendering[key] = nil
            guard response.status == 200, versions.current(response.versions), size <= limit / 4 else { return }
            if let old = state.entries.updateValue(Entry(response: response, size: size), forKey: key) {
                state.bytes -= old.size
            } else {
                state.ring.append(key)
            }
            state.bytes += size
            state.evict(toFit: limit)
        }
    }

    package func invalidate(source: String) {
        state.withLock { state in
            for (key, entry) in state.entries where entry.response.versions[source] != nil {
                state.entries[key] = nil
                state.bytes -= entry.size
            }
        }
    }

    package var count: Int { state.withLock { $0.entries.count } }
    /// The bytes counted as held now.
    package var bytes: Int { state.withLock { $0.bytes } }
}

/// No cache: each request renders (`serve --no-background-refresh`, where readers' own
/// requests revalidate what is stale).
package struct RenderEveryTime: RenderedResponseCache {
    package func kept(_ key: String, versions: SourceVersions) -> RenderedResponse? { nil }

    package func response(for key: String, versions: SourceVersions,
                  render: @escaping @Sendable () async -> RenderedResponse) async -> (RenderedResponse, hit: Bool) {
        (await render(), false)
    }

    package func invalidate(source: String) async {}

    package init() {}
}

/// Each source's data version in this process: bumped when a refresh finds its cards or
/// its state (live, cache, snapshot, failed) changed, which retires every response built
/// from the old one; moved softly when another process wrote the store (a purge, cron's
/// refresh), after which a kept response is still answered while it is rendered again.
package final class SourceVersions: Sendable {
    private struct Versions {
        package var current: [String: Int] = [:]
        /// The version each source was last bumped to (not moved softly).
        package var bumped: [String: Int] = [:]
        /// Moves of any source, bumped or soft.
        package var moves = 0
    }

    private let versions = Mutex(Versions())

    package func version(of source: String) -> Int {
        versions.withLock { $0.current[source] ?? 0 }
    }

    /// The configuration's own version: every response is built from it too (a page of
    /// every source, the reader's source list, the feed's title), and a reload that
    /// changes anything moves it on. No source id has this form.
    package static let configuration = "~configuration"

    package func snapshot(_ sources: [String]) -> [String: Int] {
        versions.withLock { versions in
            let all = versions.current
            var built = Dictionary(uniqueKeysWithValues: sources.map { ($0, all[$0] ?? 0) })
            built[Self.configuration] = all[Self.configuration] ?? 0
            return built
        }
    }

    /// Retires every response built from `source`: the next reader waits for a new one.
    package func bump(_ source: String) {
        versions.withLock { versions in
            versions.current[source, default: 0] += 1
            versions.bumped[source] = versions.current[source]
            versions.moves += 1
        }
    }

    /// Moves `source` on, as another process's write to the store: a response built from
    /// it is rendered again, and answered meanwhile (``servable(_:)``).
    package func moveSoftly(_ source: String) {
        versions.withLock { $0.current[source, default: 0] += 1; $0.moves += 1 }
    }

    /// How many times any source has moved: what was read of the store before a move
    /// (``bump(_:)``, ``moveSoftly(_:)``) may be older than what the move brings.
    package var moves: Int {
        versions.withLock { $0.moves }
    }

    /// Whether every source of `built` is still at that version.
    package func current(_ built: [String: Int]) -> Bool {
        versions.withLock { versions in built.allSatisfy { versions.current[$0.key] ?? 0 == $0.value } }
    }

    /// Whether a response built at `built` may still be answered while it is rendered
    /// again: no source of it was bumped since (only moved softly).
    package func servable(_ built: [String: Int]) -> Bool {
        versions.withLock { versions in built.allSatisfy { versions.bumped[$0.key] ?? 0 <= $0.value } }
    }

    package init() {}
}
