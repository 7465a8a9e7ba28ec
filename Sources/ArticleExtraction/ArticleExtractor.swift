import FeedCore
import FeedSupport
import Foundation
import HTMLQuery

/// The article on a page, as sanitized HTML: what a feed that only teases leaves out.
/// With a selector, the first element it finds; without (`full_content: auto`), the
/// well-known order readers use: the page's JSON-LD `articleBody`, else its `<article>`
/// (the one with the most text), else its `<main>`, else the element holding the most
/// paragraph text (a readability-style count of the text in each parent's `<p>`s).
public enum ArticleExtractor {
    /// Text (UTF-8 bytes) a found `<article>` or `<main>` must hold to be taken for the
    /// article (shorter, it is a teaser or a frame, and the next way is tried).
    public static let leastText = 200

    /// Why no article was found on a page.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The selector found nothing (or nothing with text).
        case noMatch(String)
        /// `auto` found no article, main element or block of paragraphs.
        case noArticle
        /// The page could not be searched in the work a page may take.
        case query(HTMLQuery.Failure)

        public var description: String {
            switch self {
            case .noMatch(let selector): "`\(selector)` matched nothing with text"
            case .noArticle: "no article found (no articleBody, <article>, <main> or block of paragraphs)"
            case .query(let failure): failure.description
            }
        }
    }

    /// The article of `page`, cleaned by ``HTMLSanitizer`` with links resolved against the
    /// page; `selector` nil reads it the `auto` way.
    public static func article(of page: HTMLPage, selector: HTMLQuery?) throws(Failure) -> String {
        guard let root = page.root else { throw selector.map { .noMatch($0.text) } ?? .noArticle }
        do {
            if let selector {
                guard let node = try root.select(selector).first(where: { $0.textSize > 0 }) else { throw Failure.noMatch(selector.text) }
                return clean(node.innerHTML, page: page)
            }
            if let body = linkedDataBody(root) { return clean(paragraphs(body), page: page) }
            for query in [Self.articles, Self.mains] {
                let found = try select(query, under: root).map { ($0, $0.textSize) }.max { $0.1 < $1.1 }
                if let (node, length) = found, length >= leastText { return clean(node.innerHTML, page: page) }
            }
            if let block = try densestBlock(root) { return clean(block.innerHTML, page: page) }
            throw Failure.noArticle
        } catch let failure as Failure {
            throw failure
        } catch let failure as HTMLQuery.Failure {
            throw .query(failure)
        } catch {
            throw .noArticle
        }
    }

    static let linkedData = query("//script[@type='application/ld+json']")
    static let articles = query("//article")
    static let mains = query("//main | //*[@role='main']")
    static let paragraphParents = query("//p/..")
    static let childParagraphs = query("./p")

    /// A fixed XPath of ours (nil only if libxml2 could not read it, which the tests show).
    private static func query(_ xpath: String) -> HTMLQuery? {
        try? HTMLQuery("xpath:" + xpath)
    }

    private static func select(_ query: HTMLQuery?, under node: HTMLNode) throws(HTMLQuery.Failure) -> [HTMLNode] {
        guard let query else { return [] }
        return try node.select(query)
    }

    /// The longest `articleBody` of the page's JSON-LD objects (within `@graph` too).
    static func linkedDataBody(_ root: HTMLNode) -> String? {
        var best: String?
        for script in (try? select(linkedData, under: root)) ?? [] {
            guard let value = try? JSONBody.tape.decode(JSONValue.self, from: Data(script.rawText.utf8)) else { continue }
            visit(value, depth: 0) { body in
                if body.utf8.count >= leastText, body.utf8.count > best?.utf8.count ?? 0 { best = body }
            }
        }
        return best
    }

    private static func visit(_ value: JSONValue, depth: Int, _ found: (String) -> Void) {
        guard depth < 8 else { return }
        switch value {
        case .object(let object):
            if case .string(let body)? = object["articleBody"] { found(body) }
            for member in object.values { visit(member, depth: depth + 1, found) }
        case .array(let values):
            for member in values { visit(member, depth: depth + 1, found) }
        default:
            return
        }
    }

    /// Plain text as paragraphs: a blank line (or, with none, each line) starts the next.
    static func paragraphs(_ text: String) -> String {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let blocks = normalized.contains("\n\n") ? normalized.components(separatedBy: "\n\n") : normalized.components(separatedBy: "\n")
        return blocks.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            .map { "<p>" + HTMLSanitizer.escapeText($0) + "</p>" }.joined()
    }

    /// The element whose own `<p>` children hold the most text.
    static func densestBlock(_ root: HTMLNode) throws(HTMLQuery.Failure) -> HTMLNode? {
        var best: (node: HTMLNode, score: Int)?
        for parent in try select(paragraphParents, under: root) {
            let score = try select(childParagraphs, under: parent).reduce(0) { $0 + $1.textSize }
            if score > best?.score ?? 0 { best = (parent, score) }
        }
        return best?.node
    }

    /// Sanitized, the white space around it trimmed (at its ends only: Foundation's trim
    /// reads the whole string as UTF-16, a fifth of the time of reading an article).
    private static func clean(_ html: String, page: HTMLPage) -> String {
        var text = Substring(HTMLSanitizer.clean(html, base: page.url))
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
