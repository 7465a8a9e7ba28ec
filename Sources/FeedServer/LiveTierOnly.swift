import ServeAccess
import ServeHTTP
import FeedConfig
import FeedCore
import FeedEngine

/// A runner's transports without their fallbacks: `serve`'s refresh of a source the card
/// store holds. When its upstream fails, readers are answered from the store, so a cached
/// copy read and decoded again would be thrown away (with 500 sources down, that was a
/// cold run's CPU every time the refreshes came round, under the readers' requests).
struct LiveTierOnly: TransportProvider {
    let base: any TransportProvider

    func tiers(for source: SourceConfig, plugin: any FeedSource.Type) -> [TransportTier] {
        base.tiers(for: source, plugin: plugin).filter { $0.origin == nil }
    }

    func finishWrites() async {
        await base.finishWrites()
    }

    func articles(for source: SourceConfig) -> WholeArticles? {
        base.articles(for: source)
    }
}
