import FeedCore

/// An id as the text view shortens it (`c70ee07…0004`: its start, `…`, its end;
/// `...` for the ellipsis where a keyboard has none): `show` and `mark` accept it when one
/// card's id has that start and end.
public struct ShortenedID: Sendable {
    public let prefix: String
    public let suffix: String

    /// The shortened form in `text` (the part after `SOURCE:`), if it is one.
    public init?(_ text: String) {
        let parts = text.replacing("...", with: "…").split(separator: "…", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        prefix = String(parts[0])
        suffix = String(parts[1])
    }

    public func matches(_ card: Card) -> Bool {
        matches(upstreamID: card.upstreamID)
    }

    public func matches(upstreamID: String) -> Bool {
        upstreamID.hasPrefix(prefix) && upstreamID.hasSuffix(suffix) && upstreamID.count >= prefix.count + suffix.count
    }
}
