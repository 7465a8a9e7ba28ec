import FeedCore
import FeedSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// RSS 0.9x/2.0, RSS 1.0 (RDF), Atom 1.0 and Atom 0.3 read with Foundation's `XMLParser`
/// (namespaces processed, so `atom:link` inside RSS and a default namespace both work).
/// Elements are told apart by namespace and name; unknown ones are ignored.
final class XMLFeedReader: NSObject, XMLParserDelegate {
    /// The vocabularies read, told apart once per element (not by comparing URIs in every
    /// case of every field switch).
    enum Namespace {
        case noNamespace, atom, atom03, rss1, rss090, rdf, dc, content, media, itunes, other

        init(uri: String) {
            switch uri {
            // RSS 2.0 as Userland once declared it is plain RSS 2.0.
            case "", "http://backend.userland.com/rss2", "http://backend.userland.com/rss": self = .noNamespace
            case "http://www.w3.org/2005/Atom": self = .atom
            case "http://purl.org/atom/ns#": self = .atom03
            case "http://purl.org/rss/1.0/": self = .rss1
            case "http://my.netscape.com/rdf/simple/0.9/": self = .rss090
            case "http://www.w3.org/1999/02/22-rdf-syntax-ns#": self = .rdf
            case "http://purl.org/dc/elements/1.1/": self = .dc
            case "http://purl.org/rss/1.0/modules/content/": self = .content
            case "http://search.yahoo.com/mrss/": self = .media
            case "http://www.itunes.com/dtds/podcast-1.0.dtd": self = .itunes
            default: self = .other
            }
        }

        var isAtom: Bool { self == .atom || self == .atom03 }
    }

    /// What stopped the reading.
    enum Failure: Error {
        case notAFeed(root: String)
        case malformed(line: Int, reason: String)
    }

    /// What the callbacks build, and all they change: held in one stored property, so a
    /// callback makes one checked access to the reader (the runtime checks every access to
    /// a class's stored property) instead of one for each field it reads or writes.
    private struct Reading {
        struct Element {
            var namespace: Namespace
            var name: String
            var attributes: [String: String]
            /// `xml:base` in effect here: relative links resolve against it.
            var base: URL
            var text = ""
        }

        var stack: [Element] = []
        var feed: ParsedFeed?
        var entry: ParsedEntry?
        var entryDepth = 0
        /// The index in ``stack`` of an Atom construct of `type="xhtml"`, whose child elements
        /// are its content, kept as markup.
        var xhtmlContainer: Int?
        var failure: Failure?
        let url: URL
        /// The most entries read: past them nothing more is built (``isFull``).
        var limit = Int.max
        var isFull = false

        /// An element begins; false when the document is not a feed and reading stops.
        mutating func start(_ name: String, namespaceURI: String?, attributes: [String: String]) -> Bool {
            let namespace = Namespace(uri: namespaceURI ?? "")
            let parentBase = stack.last?.base ?? url
            let declaredBase = attributes.isEmpty ? nil : attributes["xml:base"] ?? attributes["base"]
            let base = declaredBase.flatMap { URL(string: $0, relativeTo: parentBase)?.absoluteURL } ?? parentBase
            if let container = xhtmlContainer {
                let attributeText = attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\"\(XMLFeedReader.escaped($0.value))\"" }.joined()
                stack[container].text += "<\(name)\(attributeText)>"
            }
            if stack.isEmpty {
                switch (namespace, name) {
                case (.noNamespace, "rss"): feed = ParsedFeed(format: .rss2)
                case (.rdf, "RDF"): feed = ParsedFeed(format: .rss1)
                case (.atom, "feed"): feed = ParsedFeed(format: .atom)
                case (.atom03, "feed"): feed = ParsedFeed(format: .atom03)
                case (.noNamespace, "CHANNEL"): feed = ParsedFeed(format: .cdf)
                default:
                    failure = .notAFeed(root: name)
                    return false
                }
            }
            stack.append(Element(namespace: namespace, name: name, attributes: attributes, base: base))
            if entry == nil, isEntry(namespace, name) {
                entry = ParsedEntry()
                entryDepth = stack.count
                if let about = attributes["rdf:about"] ?? attributes["about"] { entry?.id = about }
                if feed?.format == .cdf {
                    if let href = attributes["HREF"] {
                        entry?.id = href
                        entry?.link = XMLFeedReader.web(href, base: base)
                    }
                    if let modified = attributes["LASTMOD"] { entry?.published = DateText(text: modified) }
                }
            }
            if xhtmlContainer == nil, namespace.isAtom,
               ["content", "summary", "title"].contains(name), XMLFeedReader.atomType(attributes) == "xhtml" {
                xhtmlContainer = stack.count - 1
            }
            return true
        }

        /// Text (or CDATA) inside the current element; inside XHTML content, as markup.
        mutating func append(_ text: String) {
            if let container = xhtmlContainer {
                stack[container].text += XMLFeedReader.escaped(text)
            } else if !stack.isEmpty {
                stack[stack.count - 1].text += text
            }
        }

        /// The current element ends: an entry is finished, or a field of the entry or feed read.
        mutating func end(_ name: String) {
            guard let element = stack.popLast() else { return }
            if let container = xhtmlContainer {
                if container < stack.count {
                    stack[container].text += "</\(name)>"
                    return
                }
                xhtmlContainer = nil
            }
            if entry != nil, stack.count + 1 == entryDepth {
                if let finished = entry { feed?.entries.append(finished) }
                entry = nil
                if (feed?.entries.count ?? 0) >= limit { isFull = true }
                return
            }
            if entry != nil {
                readEntryField(element)
            } else {
                readFeedField(element)
            }
        }

        // MARK: Fields

        func isEntry(_ namespace: Namespace, _ name: String) -> Bool {
            (name == "item" && (namespace == .noNamespace || namespace == .rss1 || namespace == .rss090)) || (name == "entry" && namespace.isAtom)
                || (name == "ITEM" && namespace == .noNamespace && feed?.format == .cdf)
        }

        var parentName: String { stack.last?.name ?? "" }

        private mutating func readEntryField(_ element: Element) {
            let text = HTMLText.trimmed(element.text)
            let attributes = element.attributes
            func link(_ value: String?) -> URL? { value.flatMap { XMLFeedReader.web($0, base: element.base) } }
            switch (element.namespace, element.name) {
            case (.noNamespace, "title"), (.rss1, "title"), (.rss090, "title"), (.noNamespace, "TITLE"):
                entry?.title = text
            case (.dc, "title"), (.media, "title"):
                // Only where the item has no title of its own (before or after).
                if entry?.title == nil, !text.isEmpty { entry?.title = text }
            case (.noNamespace, "ABSTRACT"):
                entry?.summaryHTML = XMLFeedReader.html(text, type: "text")
            case (.noNamespace, "link"), (.rss1, "link"), (.rss090, "link"):
                if entry?.link == nil { entry?.link = link(text) }
            case (.noNamespace, "description"), (.rss1, "description"):
                entry?.summaryHTML = element.text
            case (.noNamespace, "guid"):
                // A guid that is an absolute web address is the link when there is no <link>
                // (FeedCards), whatever `isPermaLink` claims; a bare name is only an id.
                entry?.id = text
            case (.noNamespace, "pubDate"):
                entry?.published = DateText(text: text)
            case (.noNamespace, "author"):
                entry?.author = XMLFeedReader.personName(text)
            case (.noNamespace, "category"), (.dc, "subject"):
                if !text.isEmpty { entry?.categories.append(text) }
            case (.noNamespace, "comments"):
                entry?.comments = link(text)
            case (.noNamespace, "enclosure"):
                if let url = link(attributes["url"]) {
                    entry?.enclosures.append(Enclosure(url: url, type: attributes["type"], length: attributes["length"].flatMap { Int($0) }))
                }
            case (.dc, "creator"), (.itunes, "author"):
                if entry?.author == nil, !text.isEmpty { entry?.author = XMLFeedReader.personName(text) }
            case (.dc, "date"):
                if entry?.published == nil { entry?.published = DateText(text: text) }
            case (.content, "encoded"):
                entry?.contentHTML = element.text
            case (.media, "thumbnail"):
                if let url = link(attributes["url"]) { entry?.images.append(url) }
            case (.media, "content"):
                let isImage = attributes["medium"] == "image" || attributes["type"]?.hasPrefix("image/") == true
                if isImage, let url = link(attributes["url"]) { entry?.images.append(url) }
            case (.media, "description"), (.itunes, "summary"):
                if entry?.summaryHTML == nil { entry?.summaryHTML = XMLFeedReader.html(text, type: "text") }
            case (.itunes, "image"):
                if let url = link(attributes["href"]) { entry?.images.append(url) }
            case (let namespace, let name) where namespace.isAtom:
                readAtomEntryField(name, element: element, text: text)
            default:
                break
            }
        }

        private mutating func readAtomEntryField(_ name: String, element: Element, text: String) {
            let attributes = element.attributes
            switch name {
            case "id":
                entry?.id = text
            case "title":
                let (content, type) = XMLFeedReader.atomContent(element.text, attributes: attributes)
                entry?.title = type == "text" ? HTMLText.trimmed(content) : content
                entry?.titleIsHTML = type != "text"
            case "link":
                guard let href = attributes["href"], let url = XMLFeedReader.web(href, base: element.base) else { return }
                switch attributes["rel"] ?? "alternate" {
                case "alternate":
                    // The first alternate, or the first HTML one when several are given.
                    if entry?.link == nil || (attributes["type"] ?? "text/html") == "text/html" && entry?.linkIsProvisional == true {
                        entry?.link = url
                        entry?.linkIsProvisional = !["text/html", nil].contains(attributes["type"])
                    }
                case "enclosure":
                    entry?.enclosures.append(Enclosure(url: url, type: attributes["type"], length: attributes["length"].flatMap { Int($0) }))
                case "replies":
                    entry?.comments = url
                default:
                    break
                }
            case "summary":
                let (content, type) = XMLFeedReader.atomContent(element.text, attributes: attributes)
                entry?.summaryHTML = XMLFeedReader.html(content, type: type)
            case "content":
                if attributes["src"] == nil {
                    let (content, type) = XMLFeedReader.atomContent(element.text, attributes: attributes)
                    entry?.contentHTML = XMLFeedReader.html(content, type: type)
                }
            case "published", "issued":
                entry?.published = DateText(text: text)
            case "updated", "modified":
                entry?.updated = DateText(text: text)
            case "name" where parentName == "author":
                if entry?.author == nil, !text.isEmpty { entry?.author = text }
            case "category":
                if let term = attributes["label"] ?? attributes["term"], !term.isEmpty { entry?.categories.append(term) }
            default:
                break
            }
        }

        private mutating func readFeedField(_ element: Element) {
            let text = HTMLText.trimmed(element.text)
            let inChannel = ["channel", "feed"].contains(parentName)
            switch (element.namespace, element.name) {
            case (.noNamespace, "title"), (.rss1, "title"), (.atom, "title"), (.atom03, "title"):
                if inChannel, feed?.title == nil { feed?.title = HTMLText.plain(text) }
            case (.noNamespace, "TITLE"):
                if parentName == "CHANNEL", feed?.title == nil { feed?.title = HTMLText.plain(text) }
            case (.dc, "date"):
                if inChannel, feed?.date == nil, !text.isEmpty { feed?.date = DateText(text: text) }
            case (.noNamespace, "managingEditor"), (.dc, "creator"), (.itunes, "author"):
                if inChannel, feed?.author == nil, !text.isEmpty { feed?.author = XMLFeedReader.personName(text) }
            case (.atom, "name"), (.atom03, "name"):
                if parentName == "author", stack.count == 2, feed?.author == nil, !text.isEmpty { feed?.author = text }
            case (.atom, "link"), (.atom03, "link"):
                if inChannel, element.attributes["rel"] == "next", let href = element.attributes["href"] {
                    feed?.next = XMLFeedReader.web(href, base: element.base)
                }
            default:
                break
            }
        }
    }

    private var reading: Reading

    private init(url: URL) {
        reading = Reading(url: url)
    }

    /// The feed in `document` (UTF-8, entities made XML's: ``FeedBytes``), read from `url`,
    /// its first `limit` entries: reading stops there, so a feed of 300,000 items costs
    /// what its first `max_items` cost.
    ///
    /// The document is given to the parser as a stream, which feeds libxml2 a piece at a
    /// time: given as one piece, libxml2 refuses any document over 10,000,000 bytes (its
    /// "huge input" guard), whatever `max_body` allows.
    static func read(_ document: Data, url: URL, limit: Int = .max) throws(Failure) -> ParsedFeed {
        let reader = XMLFeedReader(url: url)
        reader.reading.limit = max(1, limit)
        let parser = XMLParser(stream: InputStream(data: document))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        if reader.reading.isFull, let feed = reader.reading.feed { return datingEntries(feed) }
        if let failure = reader.reading.failure { throw failure }
        guard parsed, let feed = reader.reading.feed else {
            let reason = parser.parserError.map(Self.describe) ?? "the document ends early"
            throw .malformed(line: parser.lineNumber, reason: reason)
        }
        return datingEntries(feed)
    }

    /// RSS items without a date of their own take the channel's `dc:date`.
    static func datingEntries(_ feed: ParsedFeed) -> ParsedFeed {
        guard let date = feed.date, feed.format == .rss2 || feed.format == .rss1 else { return feed }
        var feed = feed
        for index in feed.entries.indices where feed.entries[index].published == nil && feed.entries[index].updated == nil {
            feed.entries[index].published = date
        }
        return feed
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if !reading.start(name, namespaceURI: namespaceURI, attributes: attributes) { parser.abortParsing() }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        reading.append(string)
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        reading.append(String(decoding: block, as: UTF8.self))
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        reading.end(name)
        if reading.isFull { parser.abortParsing() }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if reading.failure == nil, !reading.isFull {
            reading.failure = .malformed(line: parser.lineNumber, reason: Self.describe(parseError))
        }
    }

    // MARK: Helpers

    /// An Atom text construct's type: `text` (the default), `html` or `xhtml`; Atom 0.3's
    /// `mode="escaped"` is HTML.
    static func atomType(_ attributes: [String: String]) -> String {
        if attributes["mode"] == "escaped" { return "html" }
        switch attributes["type"]?.lowercased() {
        case "html", "text/html": return "html"
        case "xhtml", "application/xhtml+xml": return "xhtml"
        default: return "text"
        }
    }

    /// An Atom text construct's content and type: Atom 0.3's `mode="base64"` decoded (its
    /// `type` then says what the bytes are: plain text unless `text/html` or XHTML).
    static func atomContent(_ text: String, attributes: [String: String]) -> (String, type: String) {
        guard attributes["mode"] == "base64" else { return (text, atomType(attributes)) }
        let compact = text.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: compact), let decoded = String(data: data, encoding: .utf8) else {
            return (text, "text")
        }
        var typed = attributes
        typed["mode"] = nil
        return (decoded, atomType(typed))
    }

    /// Content as HTML: plain text is escaped so that reading it as HTML gives it back.
    static func html(_ content: String, type: String) -> String {
        type == "text" ? escaped(content) : content
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// An absolute http(s) URL from `text` (relative ones resolved against `base`).
    static func web(_ text: String, base: URL) -> URL? {
        let trimmed = HTMLText.trimmed(text)
        // Most links are absolute: parsed once, not resolved against the base.
        let absolute = trimmed.hasPrefix("https://") || trimmed.hasPrefix("http://")
        guard !trimmed.isEmpty, let url = absolute ? URL(string: trimmed) : URL(string: trimmed, relativeTo: base)?.absoluteURL else {
            return nil
        }
        return web(url)
    }

    /// `url` when it is an absolute http(s) URL with a host.
    static func web(_ url: URL) -> URL? {
        url.isWebAddress ? url : nil
    }

    /// `jane@example.com (Jane Doe)` → `Jane Doe`; a bare name stays as it is.
    static func personName(_ text: String) -> String {
        let trimmed = HTMLText.collapse(text)
        if let open = trimmed.firstIndex(of: "("), let close = trimmed.lastIndex(of: ")"), open < close {
            let name = trimmed[trimmed.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { return name }
        }
        return trimmed
    }

    static func describe(_ error: any Error) -> String {
        PlainWords.xmlError(code: (error as NSError).code)
    }
}
