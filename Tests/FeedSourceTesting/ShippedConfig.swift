import FeedConfig
import FeedCore
import FeedEngine
import FeedSupport
import Foundation
import SourceCatalogue

/// What the shipped Sources.yml gives offline, worked out from the catalogue and each
/// source's recorded snapshots (never typed into a test), so adding a source changes
/// the expectation by itself.
public enum ShippedConfig {
    public struct Expectation: Sendable {
        /// Source id → cards its snapshots give within its budget, for each enabled source.
        public var counts: [String: Int]
        /// The first card id of each enabled source, in config order.
        public var firstIDs: [String]
    }

    public static func offlineExpectation() async throws -> Expectation {
        var counts: [String: Int] = [:]
        var firstIDs: [String] = []
        for (entry, cards) in try await offlineCardsBySource() {
            counts[entry.id] = min(cards.count, entry.maxItems)
            if let first = cards.first { firstIDs.append(first.id) }
        }
        return Expectation(counts: counts, firstIDs: firstIDs)
    }

    /// Every card each enabled shipped source makes from its recordings, in config order.
    public static func offlineCards() async throws -> [Card] {
        try await offlineCardsBySource().flatMap(\.cards)
    }

    static func offlineCardsBySource() async throws -> [(entry: SourceConfig, cards: [Card])] {
        let text = try Workspace.shippedSourcesYml
        let config = try ConfigLoader(registry: SourceRegistry(SourceCatalogue.sources), environment: [:])
            .load(text: text, file: "Sources.yml")
        var result: [(entry: SourceConfig, cards: [Card])] = []
        for entry in config.sources where entry.enabled {
            guard let type = SourceCatalogue.sources.first(where: { $0.plugin == entry.plugin }) else { continue }
            let source = try type.init(settings: entry.settings, http: RecordedUpstream(snapshotsOf: type))
            var trail = CursorTrail()
            var cards: [Card] = []
            var pages = 0
            while pages < entry.maxPages && cards.count < entry.maxItems {
                let page = try await source.page(after: trail.current)
                pages += 1
                cards += page.cards
                guard try trail.advance(to: page.next) else { break }
            }
            result.append((entry, cards))
        }
        return result
    }
}
