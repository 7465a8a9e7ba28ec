import FeedCore
import FeedFormats
import FeedSupport
#if canImport(FoundationXML)
import Foundation
import FoundationXML
#endif

/// OPML 2.0 subscription lists (http://opml.org/spec2.opml), the way feed readers pass
/// their feeds around: read for `aggregate import`, written by `sources --format opml`
/// and `serve`'s `/sources.opml`.
public enum OPML {
    /// One subscription: an outline with an `xmlUrl`, and the folders (outlines without
    /// one) it sits in, outermost first.
    public struct Subscription: Sendable, Equatable {
        public var title: String
        public var url: URL
        public var folders: [String]

        public init(title: String, url: URL, folders: [String]) {
            self.title = title
            self.url = url
            self.folders = folders
        }
    }

    /// Why a file could not be read as OPML.
    public struct ReadError: Error, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var reason: String
        public var description: String { "\(file):\(line): \(reason)" }
    }

    /// The subscriptions of the OPML document `data` (named `file` in errors).
    public static func subscriptions(in data: Data, file: String) throws(ReadError) -> [Subscription] {
        let reader = OutlineReader()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        if let error = reader.error ?? (parsed ? nil : parser.parserError) {
            throw ReadError(file: file, line: reader.errorLine ?? parser.lineNumber,
                            reason: "not well-formed XML: \(PlainWords.xmlError(code: (error as NSError).code))")
        }
        if !parsed || reader.root != "opml" {
            throw ReadError(file: file, line: parser.lineNumber,
                            reason: reader.root.map { "the document is <\($0)>, not <opml>" } ?? "not well-formed XML (it ends early)")
        }
        return reader.subscriptions
    }

    /// An OPML 2.0 document of `entries`, nested in folders by their tags.
    public static func document(title: String, entries: [(title: String, url: String, folders: [String])]) -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + #"<opml version="2.0">"# + "\n"
        out += "  <head>\n    <title>\(XMLText.escape(title))</title>\n  </head>\n  <body>\n"
        // Entries grouped by their folder path; a folder's outline opens once.
        var open: [String] = []
        let ordered = entries.enumerated().sorted { left, right in
            left.element.folders == right.element.folders
                ? left.offset < right.offset : precedes(left.element.folders, right.element.folders)
        }.map(\.element)
        for entry in ordered {
            let common = zip(open, entry.folders).prefix { $0 == $1 }.count
            while open.count > common {
                open.removeLast()
                out += String(repeating: "  ", count: open.count + 2) + "</outline>\n"
            }
            for folder in entry.folders.dropFirst(common) {
                out += String(repeating: "  ", count: open.count + 2) + #"<outline text="\#(XMLText.escape(folder))">"# + "\n"
                open.append(folder)
            }
            out += String(repeating: "  ", count: open.count + 2)
                + #"<outline type="rss" text="\#(XMLText.escape(entry.title))" title="\#(XMLText.escape(entry.title))" xmlUrl="\#(XMLText.escape(entry.url))"/>"#
                + "\n"
        }
        while !open.isEmpty {
            open.removeLast()
            out += String(repeating: "  ", count: open.count + 2) + "</outline>\n"
        }
        return out + "  </body>\n</opml>\n"
    }

    /// Folder paths in reading order: `[]`, then `[A]`, `[A, B]`, `[B]`.
    static func precedes(_ left: [String], _ right: [String]) -> Bool {
        for (a, b) in zip(left, right) where a != b { return a < b }
        return left.count < right.count
    }
}

/// Collects the outlines of an OPML body.
private final class OutlineReader: NSObject, XMLParserDelegate {
    var root: String?
    var subscriptions: [OPML.Subscription] = []
    var error: (any Error)?
    var errorLine: Int?
    /// The open outlines: the folder name, or nil for a subscription.
    private var outlines: [String?] = []

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if root == nil { root = name }
        guard name == "outline" else { return }
        let title = (attributes["title"] ?? attributes["text"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if let xmlUrl = attributes["xmlUrl"] ?? attributes["xmlurl"],
           let url = URL(string: xmlUrl.trimmingCharacters(in: .whitespacesAndNewlines)), url.scheme != nil {
            subscriptions.append(OPML.Subscription(title: title.isEmpty ? (url.host ?? "feed") : title, url: url,
                                                   folders: outlines.compactMap { $0 }))
            outlines.append(nil)
        } else {
            outlines.append(title.isEmpty ? nil : title)
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "outline", !outlines.isEmpty { outlines.removeLast() }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if error == nil {
            error = parseError
            errorLine = parser.lineNumber
        }
    }
}

extension OPML {
    /// The subscriptions of `config` as OPML: every source that is itself a feed
    /// (``SubscribableSource``) by its feed URL (secrets redacted) in its folders, and,
    /// given the address of a running `serve`, every other source by its served feed
    /// (`/feed.atom?source=ID`).
    /// Disabled sources are left out unless `includeDisabled`: a reader importing the list
    /// would follow feeds this one does not.
    public static func document(of config: FeedConfig, registry: SourceRegistry, servedAt base: String? = nil,
                                includeDisabled: Bool = false) -> String {
        var entries: [(title: String, url: String, folders: [String])] = []
        for source in config.sources where source.enabled || includeDisabled {
            if let feed = registry.type(for: source.plugin) as? any SubscribableSource.Type {
                let subscription = feed.subscription(source.settings)
                entries.append((source.displayName, subscription.url.redactedString, subscription.folders))
            } else if let base {
                let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
                let id = source.id.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? source.id
                entries.append((source.displayName, "\(trimmed)/feed.atom?source=\(id)", []))
            }
        }
        return document(title: config.feed.title, entries: entries)
    }
}
