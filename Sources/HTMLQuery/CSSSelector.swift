import Foundation

/// A CSS selector translated to XPath 1.0, as cssselect (lxml's) and Nokogiri translate
/// them: type and `*`, `.class`, `#id`, `[attr]`, `[attr=v]`, `~=`, `|=`, `^=`, `$=`,
/// `*=`, the combinators (descendant, `>`, `+`, `~`), `:first-child`, `:last-child`,
/// `:only-child`, `:nth-child(an+b)` (`odd`, `even`), `:not(simple)`, and groups with `,`.
/// Anything else is refused with the offset of what was not understood.
public struct CSSSelector: Sendable, Equatable {
    /// The selector as written.
    public let text: String
    /// The XPath that finds what it selects under a context node (the node itself included).
    public let xpath: String

    /// Why a selector was not understood: what, and where (0-based, in characters).
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var offset: Int
        public var message: String
        public var description: String { "at character \(offset + 1): \(message)" }

        public init(offset: Int, message: String) {
            self.offset = offset
            self.message = message
        }
    }

    public init(_ text: String) throws(Problem) {
        self.text = text
        var parser = Parser(Array(text))
        xpath = try parser.group()
    }

    private struct Parser {
        let characters: [Character]
        var index = 0

        init(_ characters: [Character]) {
            self.characters = characters
        }

        var current: Character? { index < characters.count ? characters[index] : nil }

        func problem(_ message: String, at offset: Int? = nil) -> Problem {
            Problem(offset: offset ?? index, message: message)
        }

        mutating func skipSpaces() -> Bool {
            let start = index
            while let character = current, character.isWhitespace { index += 1 }
            return index > start
        }

        /// `selector, selector…`: their union.
        mutating func group() throws(Problem) -> String {
            var paths: [String] = []
            repeat {
                _ = skipSpaces()
                paths.append(try complex())
                _ = skipSpaces()
                guard let character = current else { break }
                guard character == "," else { throw problem("unexpected \"\(character)\"") }
                index += 1
            } while true
            return paths.joined(separator: " | ")
        }

        /// Compounds joined by combinators.
        mutating func complex() throws(Problem) -> String {
            guard current != nil, current != "," else { throw problem("a selector is empty here") }
            var path = "descendant-or-self::" + (try compound())
            while true {
                let spaced = skipSpaces()
                guard let character = current, character != "," else { return path }
                switch character {
                case ">":
                    index += 1
                    _ = skipSpaces()
                    path += "/" + (try compound())
                case "+":
                    index += 1
                    _ = skipSpaces()
                    let (element, predicates) = try compoundParts()
                    path += "/following-sibling::*[1]/self::" + element + predicates
                case "~":
                    index += 1
                    _ = skipSpaces()
                    path += "/following-sibling::" + (try compound())
                default:
                    guard spaced else { throw problem("unexpected \"\(character)\"") }
                    path += "/descendant::" + (try compound())
                }
            }
        }

        mutating func compound() throws(Problem) -> String {
            let (element, predicates) = try compoundParts()
            return element + predicates
        }

        /// A type (or `*`, or none) and the predicates of its classes, ids, attributes and
        /// pseudo-classes.
        mutating func compoundParts() throws(Problem) -> (element: String, predicates: String) {
            let start = index
            var element = "*"
            if current == "*" {
                index += 1
            } else if let character = current, Self.startsName(character) {
                element = try name().lowercased()
            }
            var predicates = ""
            while let character = current, !character.isWhitespace, ![",", ">", "+", "~", ")"].contains(character) {
                predicates += "[" + (try simplePredicate()) + "]"
            }
            guard index > start else { throw problem(current.map { "unexpected \"\($0)\"" } ?? "a selector ends here") }
            return (element, predicates)
        }

        /// One `.class`, `#id`, `[attribute…]` or `:pseudo` as an XPath predicate's test.
        mutating func simplePredicate() throws(Problem) -> String {
            guard let character = current else { throw problem("a selector ends here") }
            switch character {
            case ".":
                index += 1
                return Self.hasWord("@class", try name())
            case "#":
                index += 1
                return "@id = " + Self.literal(try name())
            case "[":
                return try attribute()
            case ":":
                return try pseudo()
            default:
                throw problem("unexpected \"\(character)\"")
            }
        }

        mutating func attribute() throws(Problem) -> String {
            index += 1
            _ = skipSpaces()
            let attribute = "@" + (try name()).lowercased()
            _ = skipSpaces()
            if current == "]" {
                index += 1
                return attribute
            }
            let operatorStart = index
            var op = ""
            while let character = current, "~|^$*=".contains(character), op.count < 2 {
                op.append(character)
                index += 1
            }
            guard ["=", "~=", "|=", "^=", "$=", "*="].contains(op) else {
                throw problem("expected ], =, ~=, |=, ^=, $= or *= in an attribute selector", at: operatorStart)
            }
            _ = skipSpaces()
            let value = try value()
            _ = skipSpaces()
            guard current == "]" else { throw problem("expected ] to close the attribute selector") }
            index += 1
            let literal = Self.literal(value)
            switch op {
            case "=": return "\(attribute) = \(literal)"
            case "~=": return Self.hasWord(attribute, value)
            case "|=": return "\(attribute) = \(literal) or starts-with(\(attribute), \(Self.literal(value + "-")))"
            case "^=": return value.isEmpty ? "false()" : "starts-with(\(attribute), \(literal))"
            case "$=":
                return value.isEmpty ? "false()"
                    : "substring(\(attribute), string-length(\(attribute)) - \(value.count - 1)) = \(literal)"
            default: return value.isEmpty ? "false()" : "contains(\(attribute), \(literal))"
            }
        }

        mutating func pseudo() throws(Problem) -> String {
            let start = index
            index += 1
            let pseudo = (try name()).lowercased()
            let position = "count(preceding-sibling::*)"
            switch pseudo {
            case "first-child": return "\(position) = 0"
            case "last-child": return "count(following-sibling::*) = 0"
            case "only-child": return "\(position) = 0 and count(following-sibling::*) = 0"
            case "nth-child":
                let (a, b) = try parenthesized { (parser: inout Parser) throws(Problem) in try parser.nth() }
                let n = "(\(position) + 1)"
                if a == 0 { return "\(n) = \(b)" }
                let step = "(\(n) - \(b)) mod \(abs(a)) = 0"
                return a > 0 ? "\(step) and \(n) >= \(b)" : "\(step) and \(n) <= \(b)"
            case "not":
                let test = try parenthesized { (parser: inout Parser) throws(Problem) in try parser.negated() }
                return "not(\(test))"
            default:
                throw problem(":\(pseudo) is not supported (use :first-child, :last-child, :only-child, :nth-child(), :not())", at: start)
            }
        }

        /// The inside of `( … )`, read by `body`.
        mutating func parenthesized<Value>(_ body: (inout Parser) throws(Problem) -> Value) throws(Problem) -> Value {
            guard current == "(" else { throw problem("expected (") }
            index += 1
            _ = skipSpaces()
            let value = try body(&self)
            _ = skipSpaces()
            guard current == ")" else { throw problem("expected )") }
            index += 1
            return value
        }

        /// `:not()`'s argument: one type, class, id, attribute or pseudo-class.
        mutating func negated() throws(Problem) -> String {
            if current == "*" {
                index += 1
                return "true()"
            }
            if let character = current, Self.startsName(character) {
                return "self::" + (try name()).lowercased()
            }
            return try simplePredicate()
        }

        /// `an+b`, `odd`, `even`, `3`, `-n+2`.
        mutating func nth() throws(Problem) -> (Int, Int) {
            let start = index
            var text = ""
            while let character = current, character != ")" {
                if !character.isWhitespace { text.append(character) }
                index += 1
            }
            let lower = text.lowercased()
            if lower == "odd" { return (2, 1) }
            if lower == "even" { return (2, 0) }
            guard let n = lower.firstIndex(of: "n") else {
                guard let b = Int(lower) else { throw problem("expected an+b, odd or even", at: start) }
                return (0, b)
            }
            let aText = String(lower[..<n]), bText = String(lower[lower.index(after: n)...])
            let a: Int? = switch aText {
            case "", "+": 1
            case "-": -1
            default: Int(aText)
            }
            let b: Int? = bText.isEmpty ? 0 : (bText.hasPrefix("+") || bText.hasPrefix("-")) ? Int(bText) : nil
            guard let a, let b else { throw problem("expected an+b, odd or even", at: start) }
            return (a, b)
        }

        /// An identifier (letters, digits, `-`, `_`, and any non-ASCII letter; `\` escapes).
        mutating func name() throws(Problem) -> String {
            var text = ""
            while let character = current {
                if character == "\\", index + 1 < characters.count {
                    text.append(characters[index + 1])
                    index += 2
                    continue
                }
                guard Self.continuesName(character) else { break }
                text.append(character)
                index += 1
            }
            guard !text.isEmpty else { throw problem(current.map { "expected a name, got \"\($0)\"" } ?? "expected a name") }
            return text
        }

        /// A quoted string or a name.
        mutating func value() throws(Problem) -> String {
            guard let quote = current, quote == "\"" || quote == "'" else { return try name() }
            let start = index
            index += 1
            var text = ""
            while let character = current, character != quote {
                if character == "\\", index + 1 < characters.count {
                    text.append(characters[index + 1])
                    index += 2
                    continue
                }
                text.append(character)
                index += 1
            }
            guard current == quote else { throw problem("a quoted value is not closed", at: start) }
            index += 1
            return text
        }

        static func startsName(_ character: Character) -> Bool {
            character.isLetter || character == "_" || character == "-" || character == "\\" || !character.isASCII
        }

        static func continuesName(_ character: Character) -> Bool {
            startsName(character) || character.isNumber
        }

        /// `attribute` holds `word` among its space-separated words.
        static func hasWord(_ attribute: String, _ word: String) -> String {
            "\(attribute) and contains(concat(' ', normalize-space(\(attribute)), ' '), \(literal(" " + word + " ")))"
        }

        /// `text` as an XPath 1.0 string literal (which has no escapes: a text with both
        /// quotes is a concat of pieces).
        static func literal(_ text: String) -> String {
            if !text.contains("'") { return "'\(text)'" }
            if !text.contains("\"") { return "\"\(text)\"" }
            return "concat(" + text.split(separator: "'", omittingEmptySubsequences: false).map { "'\($0)'" }.joined(separator: ", \"'\", ") + ")"
        }
    }
}
