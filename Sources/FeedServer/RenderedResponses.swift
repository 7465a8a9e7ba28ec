import Foundation
import HTTPTypes
import NIOCore
import Synchronization

/// A response rendered once and kept as bytes: both encodings, their validators, and the
/// version of every source it was built from.
struct RenderedResponse: Sendable {
    var body: ByteBuffer
    var gzip: ByteBuffer?
    var etag: String
    var gzipETag: String
    var contentType: String
    var lastModified: Date?
    var maxAge: Int?
    var degraded: String?
    /// What a reader is told instead (a 502 problem): kept as briefly as the rest.
    var status: Int = 200
    /// The sources it was built from and their versions then.
    var versions: [String: Int]
    /// The headers of each encoding, made once.
    var headers: HTTPFields = [:]
    var gzipHeaders: HTTPFields = [:]

    var size: Int { body.readableBytes + (gzip?.readableBytes ?? 0) + 256 }
}

/// The rendered-response cache of `serve`: where rendered responses are kept between
/// requests. One small seam, like the response cache and the digest store; the process
/// keeps them in memory (``InMemoryRenderedResponses``).
protocol RenderedResponseCache: Sendable {
    /// The response for `key` if it is still built from the current version of every
    /// source it read; else renders it with `render`, once however many readers ask at
    /// the same time, and keeps it.
    func response(for key: String, versions: SourceVersions,
                  render: @escaping @Sendable () async -> RenderedResponse) async -> (RenderedResponse, hit: Bool)
    /// The kept response for `key`, if it is still current: no rendering, no waiting.
    func kept(_ key: String, versions: SourceVersions) -> RenderedResponse?
    /// Forgets every response built from `source` (its data changed).
    func invalidate(source: String) async
}

/// Rendered responses in memory, at most `limit` bytes of them; the least recently used
/// go first. Single-flight: fifty readers of a cold URL wait for one rendering. A kept
/// answer is found under a lock, without a hop to another executor.
final class InMemoryRenderedResponses: RenderedResponseCache {
    private struct Entry {
        var response: RenderedResponse
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var rendering: [String: Task<RenderedResponse, Never>] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    let limit: Int

    /// 64 MiB: thousands of feeds of 50 entries.
    static let defaultLimit = 64 << 20

    init(limit: Int = defaultLimit) {
        self.limit = limit
    }

    func kept(_ key: String, versions: SourceVersions) -> RenderedResponse? {
        state.withLock { state in
            guard let entry = state.entries[key], versions.current(entry.response.versions) else { return nil }
            state.clock += 1
            state.entries[key]?.lastUse = state.clock
            return entry.response
        }
    }

    func response(for key: String, versions: SourceVersions,
                  render: @escaping @Sendable () async -> RenderedResponse) async -> (RenderedResponse, hit: Bool) {
        if let kept = kept(key, versions: versions) { return (kept, true) }
        let (task, joined) = state.withLock { state -> (Task<RenderedResponse, Never>, Bool) in
            if let task = state.rendering[key] { return (task, true) }
            let task = Task { await render() }
            state.rendering[key] = task
            return (task, false)
        }
        let response = await task.value
        guard !joined else { return (response, true) }
        state.withLock { state in
            state.rendering[key] = nil
            // Kept only while every source is still at the version it was rendered from.
            guard response.status == 200, versions.current(response.versions), response.size <= limit / 4 else { return }
            state.clock += 1
            if let old = state.entries.updateValue(Entry(response: response, lastUse: state.clock), forKey: key) {
                state.bytes -= old.response.size
            }
            state.bytes += response.size
            guard state.bytes > limit else { return }
            for (key, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[key] = nil
                state.bytes -= entry.response.size
                if state.bytes <= limit { break }
            }
        }
        return (response, false)
    }

    func invalidate(source: String) {
        state.withLock { state in
            for (key, entry) in state.entries where entry.response.versions[source] != nil {
                state.entries[key] = nil
                state.bytes -= entry.response.size
            }
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}

/// No cache: each request renders (`serve --no-background-refresh`, where readers' own
/// requests revalidate what is stale).
struct RenderEveryTime: RenderedResponseCache {
    func kept(_ key: String, versions: SourceVersions) -> RenderedResponse? { nil }

    func response(for key: String, versions: SourceVersions,
                  render: @escaping @Sendable () async -> RenderedResponse) async -> (RenderedResponse, hit: Bool) {
        (await render(), false)
    }

    func invalidate(source: String) async {}
}

/// Each source's data version in this process: bumped when a refresh finds its cards or
/// its state (live, cache, snapshot, failed) changed, which retires every response built
/// from the old one.
final class SourceVersions: Sendable {
    private let versions = Mutex<[String: Int]>([:])

    func version(of source: String) -> Int {
        versions.withLock { $0[source] ?? 0 }
    }

    func snapshot(_ sources: [String]) -> [String: Int] {
        versions.withLock { all in Dictionary(uniqueKeysWithValues: sources.map { ($0, all[$0] ?? 0) }) }
    }

    func bump(_ source: String) {
        versions.withLock { $0[source, default: 0] += 1 }
    }

    /// Whether every source of `built` is still at that version.
    func current(_ built: [String: Int]) -> Bool {
        versions.withLock { all in built.allSatisfy { all[$0.key] ?? 0 == $0.value } }
    }
}
