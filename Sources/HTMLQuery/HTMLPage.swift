import CLibXML2
import Foundation

/// One web page parsed by libxml2's HTML parser, as browsers would recover it (unclosed
/// tags, stray end tags), with no network access and nothing printed. It lives for one
/// read of one page: its nodes are valid while it is, and it is not shared between tasks.
public final class HTMLPage {
    /// The page's address, which relative links resolve against (its `<base href>` first).
    public let url: URL
    /// The charset the bytes were read in.
    public let charset: String
    let document: htmlDocPtr
    /// Work left for this page's queries (libxml2's XPath operations): every query spends
    /// from it, so no selector nor page can keep a thread past it.
    var budget: UInt
    /// One XPath context for the page's queries, and each query compiled once for it: a
    /// list page asks the same six queries of a hundred items.
    private var xpathContext: xmlXPathContextPtr?
    private var compiled: [String: xmlXPathCompExprPtr] = [:]

    /// Elements a page may hold: past these it is refused, not read.
    public static let mostElements = 500_000
    /// Nesting a page may have: libxml2 stops reading a page at 256 levels (what follows is
    /// lost), so a page that reaches it is refused rather than read in part.
    public static let mostDepth = 255
    /// XPath operations one page's queries may spend in all (a list page of 100 items and
    /// eight fields spends well under a million).
    public static let workPerPage: UInt = 50_000_000

    /// Why a page could not be read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable
        case tooManyElements(Int)
        case tooDeep

        public var description: String {
            switch self {
            case .unreadable: "the page could not be read as HTML"
            case .tooManyElements(let count): "the page has more than \(count) elements"
            case .tooDeep: "the page nests elements more than \(HTMLPage.mostDepth) deep"
            }
        }
    }

    /// Parses `body`: its charset from `contentType` (the HTTP header), else the page's own
    /// `<meta charset>` or `http-equiv`, else UTF-8.
    public init(_ body: Data, url: URL, contentType: String? = nil) throws(Failure) {
        Self.prepare
        let charset = Self.charset(header: contentType) ?? Self.charset(declaredIn: body) ?? "UTF-8"
        let options = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue
            | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_NOBLANKS.rawValue | HTML_PARSE_COMPACT.rawValue)
        let parsed = body.withUnsafeBytes { bytes -> htmlDocPtr? in
            guard let base = bytes.bindMemory(to: CChar.self).baseAddress, bytes.count > 0 else { return nil }
            return htmlReadMemory(base, Int32(clamping: bytes.count), url.absoluteString, charset, options)
                // An encoding libxml2 does not know: read as UTF-8 rather than not at all.
                ?? htmlReadMemory(base, Int32(clamping: bytes.count), url.absoluteString, "UTF-8", options)
        }
        guard let parsed else { throw .unreadable }
        // Checked before the page owns the document: a page that throws once initialized
        // is deinitialized, which frees it.
        if let failure = Self.checkShape(parsed) {
            xmlFreeDoc(parsed)
            throw failure
        }
        document = parsed
        self.charset = charset
        budget = Self.workPerPage
        let declaredBase = Self.baseHref(parsed).flatMap { URL(string: $0, relativeTo: url)?.absoluteURL }
        self.url = declaredBase.flatMap { ["http", "https"].contains($0.scheme?.lowercased() ?? "") ? $0 : nil } ?? url
    }

    deinit {
        for expression in compiled.values { xmlXPathFreeCompExpr(expression) }
        if let xpathContext { xmlXPathFreeContext(xpathContext) }
        xmlFreeDoc(document)
    }

    /// The page's XPath context (its errors kept off stderr), made on first use.
    func context() -> xmlXPathContextPtr? {
        if let xpathContext { return xpathContext }
        xpathContext = xmlXPathNewContext(document)
        xpathContext?.pointee.error = HTMLQuery.ignoreError
        return xpathContext
    }

    /// `xpath` compiled for this page's context, once.
    func compiledExpression(_ xpath: String) -> xmlXPathCompExprPtr? {
        if let expression = compiled[xpath] { return expression }
        guard let context = context(), let expression = xmlXPathCtxtCompile(context, xpath) else { return nil }
        compiled[xpath] = expression
        return expression
    }

    /// The document's root element.
    public var root: HTMLNode? {
        xmlDocGetRootElement(document).map { HTMLNode(pointer: $0, page: self) }
    }

    /// libxml2 set up once: its parser's globals, and its errors kept off stderr.
    private static let prepare: Void = {
        xmlInitParser()
    }()

    /// `text/html; charset=windows-1252` → `windows-1252`.
    static func charset(header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "charset" {
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    /// The charset a page declares in its first 2 KB: `<meta charset="…">` or
    /// `<meta http-equiv="Content-Type" content="text/html; charset=…">` (as browsers look).
    static func charset(declaredIn body: Data) -> String? {
        let head = String(decoding: body.prefix(2048), as: UTF8.self).lowercased()
        guard let found = head.range(of: #"<meta[^>]+charset\s*=\s*["']?([a-z0-9_\-:.]+)"#, options: .regularExpression) else { return nil }
        let tag = head[found]
        guard let equals = tag.range(of: "charset", options: .backwards) else { return nil }
        let value = tag[equals.upperBound...].drop { "= \"'".contains($0) }
        return value.isEmpty ? nil : String(value)
    }

    /// The `href` of the page's first `<base>`.
    private static func baseHref(_ document: htmlDocPtr) -> String? {
        var found: String?
        walk(xmlDocGetRootElement(document)) { node, _ in
            guard node.pointee.type == XML_ELEMENT_NODE else { return .skipChildren }
            guard HTMLNode.name(of: node) == "base", let href = HTMLNode.attribute("href", of: node) else { return .descend }
            found = href
            return .stop
        }
        return found
    }

    /// Refuses a page past the bounds on elements and depth.
    private static func checkShape(_ document: htmlDocPtr) -> Failure? {
        var elements = 0
        var failure: Failure?
        walk(xmlDocGetRootElement(document)) { node, depth in
            guard node.pointee.type == XML_ELEMENT_NODE else { return .skipChildren }
            elements += 1
            if elements > mostElements { failure = .tooManyElements(mostElements) }
            if depth > mostDepth { failure = .tooDeep }
            return failure == nil ? .descend : .stop
        }
        return failure
    }

    /// What a walk does after visiting a node.
    enum Step {
        case descend, skipChildren, stop
    }

    /// Visits `start` and every node under it in document order (its depth below `start`
    /// with it), without recursion: a deep page must not exhaust a thread's stack.
    static func walk(_ start: xmlNodePtr?, _ visit: (xmlNodePtr, Int) -> Step) {
        guard let start else { return }
        var node = start
        var depth = 0
        while true {
            switch visit(node, depth) {
            case .stop:
                return
            case .descend:
                if let child = node.pointee.children {
                    node = child
                    depth += 1
                    continue
                }
            case .skipChildren:
                break
            }
            // The next sibling, else the next of the nearest ancestor that has one.
            var current = node
            while true {
                if depth == 0 { return }
                if let sibling = current.pointee.next {
                    node = sibling
                    break
                }
                guard let parent = current.pointee.parent else { return }
                current = parent
                depth -= 1
            }
        }
    }
}
