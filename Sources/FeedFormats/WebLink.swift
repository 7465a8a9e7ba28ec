import FeedCore
import Foundation

/// The one test a link from an upstream passes before it becomes an `href` or a `src`:
/// an absolute `http` or `https` address with a host. Everything else (`javascript:`,
/// `data:`, `vbscript:`, `file:`, scheme-relative `//host`, text that is no URL) is left
/// out: an allow-list, because a browser reads more spellings of a scheme than any
/// deny-list names (`java\tscript:`, upper case, entities).
public enum WebLink {
    /// `url` when it is a web address.
    public static func web(_ url: URL?) -> URL? {
        url?.isWebAddress == true ? url : nil
    }

    /// `text` as a web address, nil when it is not one.
    public static func web(_ text: String) -> String? {
        ConfigMapReader.httpURL(text)?.absoluteString
    }

    /// Keys of a card's details whose text is a link: `url`, `href`, `link`, `image`,
    /// `avatar`, `hyperlink`, `src`, and names ending in `_url` or `Url`.
    static func isLinkKey(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return ["url", "href", "link", "image", "avatar", "hyperlink", "src", "thumbnail", "icon"].contains(lowered)
            || lowered.hasSuffix("_url") || key.hasSuffix("Url") || key.hasSuffix("URL")
    }

    /// `card` with every link that is not a web address left out: its `url`, `image`, the
    /// author's, the text under a link key anywhere in its details, and any text in its
    /// details that is a scriptable address. For formats that carry the whole card to
    /// programs that may render it (JSON Feed's `_aggregate`).
    public static func webOnly(_ card: Card) -> Card {
        var card = card
        card.url = web(card.url)
        card.image = web(card.image)
        if var author = card.author {
            author.url = web(author.url)
            author.image = web(author.image)
            card.author = author
        }
        if !card.details.isEmpty {
            card.details = card.details.reduce(into: [:]) { details, pair in
                if let value = webOnly(pair.value, underLinkKey: isLinkKey(pair.key)) { details[pair.key] = value }
            }
        }
        return card
    }

    /// Whether `text` is an address a browser would run or load as a document of its own
    /// (`javascript:`, `vbscript:`, `data:`), spelt as browsers read it: without the
    /// spaces and controls they drop, in any case.
    static func isScriptable(_ text: String) -> Bool {
        var scheme = ""
        for scalar in text.unicodeScalars {
            if scalar.value <= 0x20 { continue }
            if scalar == ":" { break }
            scheme.unicodeScalars.append(scalar)
            if scheme.unicodeScalars.count > 10 { return false }
        }
        return ["javascript", "vbscript", "data"].contains(scheme.lowercased())
    }

    private static func webOnly(_ value: JSONValue, underLinkKey: Bool) -> JSONValue? {
        switch value {
        case .string(let text):
            if isScriptable(text) { return nil }
            return !underLinkKey || web(text) != nil ? value : nil
        case .array(let items):
            return .array(items.compactMap { webOnly($0, underLinkKey: underLinkKey) })
        case .object(let fields):
            return .object(fields.reduce(into: [:]) { object, pair in
                if let kept = webOnly(pair.value, underLinkKey: isLinkKey(pair.key)) { object[pair.key] = kept }
            })
        default:
            return value
        }
    }
}
