import CLibXML2
import Foundation

/// An element (or attribute) of an ``HTMLPage``, valid while the page is (it holds it).
public struct HTMLNode {
    let pointer: xmlNodePtr
    let page: HTMLPage

    init(pointer: xmlNodePtr, page: HTMLPage) {
        self.pointer = pointer
        self.page = page
    }

    /// The element's name, lowercase (`div`); nil for an attribute or text.
    public var name: String? {
        pointer.pointee.type == XML_ELEMENT_NODE ? Self.name(of: pointer) : nil
    }

    /// The value of attribute `name`, nil when it has none.
    public func attribute(_ name: String) -> String? {
        Self.attribute(name, of: pointer)
    }

    /// What a reader sees of it: its text without scripts, styles or templates, blocks
    /// apart, runs of white space as one space, trimmed. An attribute's value.
    public var text: String {
        if pointer.pointee.type == XML_ATTRIBUTE_NODE { return Self.content(of: pointer) }
        var pieces = ""
        HTMLPage.walk(pointer) { node, _ in
            switch node.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                pieces += Self.content(of: node)
                return .skipChildren
            case XML_ELEMENT_NODE:
                let name = Self.name(of: node)
                if Self.invisible.contains(name) { return .skipChildren }
                if Self.breaks.contains(name) { pieces += " " }
                return .descend
            default:
                return .skipChildren
            }
        }
        return pieces.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// How much text a reader sees in it: the UTF-8 bytes of its text, scripts, styles and
    /// templates left out, white space as written. Read in place, without making strings:
    /// what blocks of a page are compared by (an article's 10 KB counted as characters was
    /// most of the time of reading it).
    public var textSize: Int {
        if pointer.pointee.type == XML_ATTRIBUTE_NODE { return Self.content(of: pointer).utf8.count }
        var size = 0
        HTMLPage.walk(pointer) { node, _ in
            switch node.pointee.type {
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                size += node.pointee.content.map { strlen($0) } ?? 0
                return .skipChildren
            case XML_ELEMENT_NODE:
                return Self.invisible.contains(Self.name(of: node)) ? .skipChildren : .descend
            default:
                return .skipChildren
            }
        }
        return size
    }

    /// Every text under it as written, scripts' included (a JSON-LD `<script>`'s body).
    public var rawText: String {
        var pieces = ""
        HTMLPage.walk(pointer) { node, _ in
            if node.pointee.type == XML_TEXT_NODE || node.pointee.type == XML_CDATA_SECTION_NODE { pieces += Self.content(of: node) }
            return .descend
        }
        return pieces
    }

    /// Its children as HTML (what `innerHTML` gives), for the sanitizer to clean.
    public var innerHTML: String {
        guard pointer.pointee.type == XML_ELEMENT_NODE, let buffer = xmlBufferCreate() else { return text }
        defer { xmlBufferFree(buffer) }
        var child = pointer.pointee.children
        while let node = child {
            htmlNodeDump(buffer, page.document, node)
            child = node.pointee.next
        }
        guard let bytes = xmlBufferContent(buffer) else { return "" }
        return String(cString: bytes)
    }

    /// The elements (or attributes) `query` finds under this one, in document order.
    public func select(_ query: HTMLQuery) throws(HTMLQuery.Failure) -> [HTMLNode] {
        try query.nodes(under: self)
    }

    /// Elements whose text is never shown.
    static let invisible: Set<String> = ["script", "style", "noscript", "template", "head"]
    /// Elements that stand apart from the text around them.
    static let breaks: Set<String> = ["br", "p", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
                                      "section", "article", "header", "footer", "ul", "ol", "table", "blockquote", "dd", "dt"]

    static func name(of node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0).lowercased() } ?? ""
    }

    /// Read in place: nothing libxml2 allocates for it is to be freed.
    static func attribute(_ name: String, of node: xmlNodePtr) -> String? {
        guard let attribute = xmlHasProp(node, name) else { return nil }
        return text(of: attribute.pointee.children)
    }

    /// The text of a run of text nodes.
    private static func text(of first: xmlNodePtr?) -> String {
        var text = ""
        var child = first
        while let part = child {
            if let content = part.pointee.content { text += String(cString: content) }
            child = part.pointee.next
        }
        return text
    }

    /// A text node's text, or an attribute's value (its text children's), read in place.
    static func content(of node: xmlNodePtr) -> String {
        if node.pointee.type == XML_TEXT_NODE || node.pointee.type == XML_CDATA_SECTION_NODE {
            return node.pointee.content.map { String(cString: $0) } ?? ""
        }
        // An attribute an XPath selected: libxml2 hands it as a node whose children are its text.
        return text(of: node.pointee.children)
    }
}
