import FeedCore
import HTMLQuery

/// `full_content:` of a source: each new card's link is fetched once and the article on
/// that page becomes the card's content (a feed that only teases, read whole).
///
///     full_content: auto
///     full_content: {selector: "article .entry"}
public enum FullContent: Sendable, Equatable {
    /// The page's JSON-LD `articleBody`, else its `<article>`, else its `<main>`, else the
    /// block with the most paragraph text.
    case auto
    /// The first element the selector (CSS, or XPath after `xpath:`) finds.
    case selector(HTMLQuery)

    /// The setting at `full_content` in `entry`, nil when absent or wrong (then reported).
    static func read(in entry: ConfigMapReader) -> FullContent? {
        guard let node = entry.node("full_content") else { return nil }
        switch node.value {
        case .scalar(let scalar) where scalar.kind == .text && scalar.text == "auto":
            return .auto
        case .map:
            guard let block = entry.map("full_content") else { return nil }
            block.rejectUnknownKeys(["selector"])
            guard block.node("selector") != nil else {
                block.report("selector", "is required: the CSS selector (or xpath:) of the article on each card's page, or write full_content: auto")
                return nil
            }
            return block.htmlQuery("selector").map(FullContent.selector)
        default:
            entry.report("full_content", "expected auto or a mapping with selector: (full_content: {selector: \"article .entry\"}), got \(node.kindDescription)")
            return nil
        }
    }
}
