import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine

/// A runner's transports, counting every response they hand a source to decode (in
/// `/metrics`: `aggregate_upstream_bodies_decoded_total{by}`). With a card store, readers
/// are answered without one: the count by `request` moves only for card lookups.
struct CountedBodies: TransportProvider {
    let base: any TransportProvider
    let count: @Sendable () -> Void

    func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier] {
        base.tiers(for: source, plugin: plugin).map { tier in
            var tier = tier
            tier.transport = Counted(base: tier.transport, count: count)
            return tier
        }
    }

    func finishWrites() async {
        await base.finishWrites()
    }

    func articles(for source: SourceConfig) -> WholeArticles? {
        base.articles(for: source)
    }

    private struct Counted: HTTPTransport {
        let base: any HTTPTransport
        let count: @Sendable () -> Void

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let response = try await base.send(request)
            count()
            return response
        }
    }
}
