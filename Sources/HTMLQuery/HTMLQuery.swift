import CLibXML2
import Foundation

/// What to find in a page, as Sources.yml writes it: a CSS selector (`h2 a`), or XPath 1.0
/// after `xpath:` (`xpath://div[@class='post']`), either optionally ending in ` @name` for
/// an attribute's value (`h2 a @href`); `@name` alone is the context element's own
/// attribute. An XPath that steps through `/tbody` also matches a table without one: a
/// browser's inspector shows the `tbody` the page never wrote, and libxml2 adds none.
public struct HTMLQuery: Sendable, Equatable, CustomStringConvertible {
    /// The query as written.
    public let text: String
    /// The XPath evaluated under the context node (nil: the context node itself).
    let xpath: String?
    /// The attribute whose value is wanted, nil for the element's text.
    public let attribute: String?

    public var description: String { text }

    /// Why a query could not be answered on a page.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// It spent the work a query may (``HTMLPage/workPerPage``, ``mostWork``).
        case tooMuchWork(String)
        /// libxml2 refused to evaluate it.
        case failed(String)

        public var description: String {
            switch self {
            case .tooMuchWork(let query): "`\(query)` took more work than a page's query may; simplify it"
            case .failed(let query): "`\(query)` could not be evaluated on this page"
            }
        }
    }

    /// XPath operations one query may spend.
    public static let mostWork: UInt = 10_000_000

    /// Reads a query; a CSS selector or an XPath that is not understood is a problem at its
    /// offset in `text`.
    public init(_ text: String) throws(CSSSelector.Problem) {
        self.text = text
        var body = text.trimmingCharacters(in: .whitespaces)
        let leading = text.prefix { $0 == " " }.count
        var attribute: String?
        if let at = body.range(of: #"(^|\s)@[A-Za-z_:][-A-Za-z0-9_:.]*$"#, options: .regularExpression) {
            attribute = String(body[at].drop { $0 != "@" }.dropFirst()).lowercased()
            body = String(body[..<at.lowerBound]).trimmingCharacters(in: .whitespaces)
        }
        self.attribute = attribute
        if body.isEmpty {
            guard attribute != nil else { throw CSSSelector.Problem(offset: 0, message: "the selector is empty") }
            xpath = nil
        } else if body.hasPrefix("xpath:") {
            let path = String(body.dropFirst(6)).trimmingCharacters(in: .whitespaces)
            if let problem = Self.compileProblem(path) {
                throw CSSSelector.Problem(offset: leading + 6, message: "the XPath is not understood: \(problem)")
            }
            xpath = path
        } else {
            do {
                xpath = try CSSSelector(body).xpath
            } catch {
                throw CSSSelector.Problem(offset: leading + error.offset, message: error.message)
            }
        }
    }

    /// What the query finds under `node`, in document order.
    func nodes(under node: HTMLNode) throws(Failure) -> [HTMLNode] {
        guard let xpath else { return [node] }
        let found = try evaluate(xpath, under: node)
        // `/tbody` pasted from an inspector: the page itself may have none.
        if found.isEmpty, text.contains("xpath:"), xpath.contains("/tbody") {
            return try evaluate(xpath.replacingOccurrences(of: "/tbody", with: ""), under: node)
        }
        return found
    }

    /// The values the query finds under `node`: each match's text, or its attribute's value
    /// (matches without the attribute left out), empty ones left out.
    public func values(under node: HTMLNode) throws(Failure) -> [String] {
        try nodes(under: node).compactMap { match in
            let value = attribute.map { match.attribute($0) } ?? match.text
            return value.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// The first value (``values(under:)``), nil when there is none.
    public func first(under node: HTMLNode) throws(Failure) -> String? {
        try values(under: node).first
    }

    private func evaluate(_ xpath: String, under node: HTMLNode) throws(Failure) -> [HTMLNode] {
        let page = node.page
        guard let context = page.context(), let compiled = page.compiledExpression(xpath) else { throw .failed(text) }
        context.pointee.node = node.pointer
        context.pointee.opCount = 0
        context.pointee.opLimit = min(Self.mostWork, page.budget)
        let result = xmlXPathCompiledEval(compiled, context)
        page.budget -= min(page.budget, context.pointee.opCount)
        guard let result else {
            throw context.pointee.opCount >= context.pointee.opLimit ? .tooMuchWork(text) : .failed(text)
        }
        defer { xmlXPathFreeObject(result) }
        guard result.pointee.type == XPATH_NODESET, let set = result.pointee.nodesetval else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { index in
            set.pointee.nodeTab[index].map { HTMLNode(pointer: $0, page: page) }
        }
    }

    /// libxml2's errors are kept off stderr: a query that fails says so as a ``Failure``.
    static let ignoreError: xmlStructuredErrorFunc = { _, _ in }

    /// Why libxml2 cannot compile `xpath`, nil when it can.
    static func compileProblem(_ xpath: String) -> String? {
        guard let context = xmlXPathNewContext(nil) else { return "libxml2 is not available" }
        defer { xmlXPathFreeContext(context) }
        context.pointee.error = ignoreError
        guard let compiled = xmlXPathCtxtCompile(context, xpath) else {
            let message = context.pointee.lastError.message.map { String(cString: $0) } ?? "invalid expression"
            return message.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        xmlXPathFreeCompExpr(compiled)
        return nil
    }
}
