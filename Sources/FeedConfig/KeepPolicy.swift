import FeedCore
import Foundation

/// How long the card store keeps cards: Sources.yml's `keep: {gone_for: 90d, max_cards:
/// 10000}`, at the top level and per source (a source's own replaces the top level's
/// values it gives).
public struct KeepPolicy: Sendable, Equatable {
    /// Seconds a gone card is kept.
    public var goneFor: Double
    /// At most this many cards per source.
    public var maxCards: Int

    public static let `default` = KeepPolicy(goneFor: 90 * 86_400, maxCards: 10_000)

    public init(goneFor: Double, maxCards: Int) {
        self.goneFor = goneFor
        self.maxCards = maxCards
    }

    /// Reads `keep:` of `entry` over `base`; nil when there is none.
    static func read(in entry: ConfigMapReader, over base: KeepPolicy) -> KeepPolicy? {
        guard let block = entry.map("keep") else { return nil }
        block.rejectUnknownKeys(["gone_for", "max_cards"])
        var policy = base
        if let text = block.string("gone_for") {
            if let seconds = DigestConfig.seconds(fromDuration: text) {
                policy.goneFor = seconds
            } else {
                block.report("gone_for", "expected a duration such as 30d, 12w or 36h, got \"\(text)\"")
            }
        }
        if let count = block.integer("max_cards", minimum: 1, maximum: 1_000_000) { policy.maxCards = count }
        return policy
    }
}
