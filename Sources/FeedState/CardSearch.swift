import FeedCore
import Foundation

/// A search over the kept cards, parsed from the query language every front end shares
/// (`aggregate search`, the reader's box, `/search?q=`):
///
///     red shirt            both words, anywhere in title, summary, author, tags or source
///     "red shirt"          the words together, in that order
///     -kids  -"gift card"  not this word or phrase
///     source:ltk           only this source (several: any of them)
///     kind:deal            only this kind (several: any of them)
///     price<100            price below, also <=, >, >= and = (cards without a price, or with one of
///                          more than six decimals, are left out)
///
/// Words match whole, in any case and with or without accents (`cafe` finds `Café`). Found
/// cards are ranked: those whose title holds every word and phrase first, then the newest
/// (published, else first seen, to the second: ``second(of:)``), then by id. The stores say the same in SQL; ``matches(_:)``
/// and ``ranked(_:)`` are its specification and the in-memory store's code.
public struct CardSearch: Sendable, Equatable {
    /// Each a word or a phrase, as normalized tokens (``SearchText/tokens(_:)``).
    public var required: [[String]] = []
    public var excluded: [[String]] = []
    public var sources: [String] = []
    public var kinds: [Card.Kind] = []
    public var prices: [PriceBound] = []

    /// `price<100`: a comparison of the card's price amount with `amount`.
    public struct PriceBound: Sendable, Equatable {
        public enum Comparison: String, Sendable, CaseIterable {
            case below = "<", atMost = "<=", above = ">", atLeast = ">=", equal = "="
        }

        public var comparison: Comparison
        public var amount: Decimal

        public init(comparison: Comparison, amount: Decimal) {
            self.comparison = comparison
            self.amount = amount
        }

        public func admits(_ price: Decimal) -> Bool {
            switch comparison {
            case .below: price < amount
            case .atMost: price <= amount
            case .above: price > amount
            case .atLeast: price >= amount
            case .equal: price == amount
            }
        }
    }

    /// A query that cannot be searched, in words for the person who typed it.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The longest query taken, in characters, and the most terms: no query can make a
    /// search that stalls the thread answering it.
    public static let maxLength = 1000
    public static let maxTerms = 32

    public init() {}

    /// Parses `text` (see the type's documentation).
    public init(parsing text: String) throws(Problem) {
        guard text.count <= Self.maxLength else {
            throw Problem(description: "the search is \(text.count) characters long; at most \(Self.maxLength) are taken")
        }
        var terms = 0
        for piece in Self.pieces(of: text) {
            terms += 1
            guard terms <= Self.maxTerms else { throw Problem(description: "the search has more than \(Self.maxTerms) terms; give fewer") }
            if piece.quoted {
                let tokens = SearchText.tokens(piece.text)
                if !tokens.isEmpty { piece.negated ? excluded.append(tokens) : required.append(tokens) }
                continue
            }
            let lowered = piece.text.lowercased()
            if !piece.negated, lowered.hasPrefix("source:"), lowered.count > 7 {
                sources.append(String(piece.text.dropFirst(7)))
            } else if !piece.negated, lowered.hasPrefix("kind:"), lowered.count > 5 {
                let name = String(lowered.dropFirst(5))
                guard let kind = Card.Kind(rawValue: name) else {
                    throw Problem(description: "kind:\(name) is not a kind; kinds are \(Card.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                kinds.append(kind)
            } else if !piece.negated, lowered.hasPrefix("price"), let bound = try Self.priceBound(String(lowered.dropFirst(5))) {
                prices.append(bound)
            } else {
                let tokens = SearchText.tokens(piece.text)
                if !tokens.isEmpty { piece.negated ? excluded.append(tokens) : required.append(tokens) }
            }
        }
        guard !isEmpty else {
            throw Problem(description: "give words to search for, e.g. \"red shirt\" -kids source:ltk price<100")
        }
    }

    /// Whether the search asks for nothing at all.
    public var isEmpty: Bool {
        required.isEmpty && excluded.isEmpty && sources.isEmpty && kinds.isEmpty && prices.isEmpty
    }

    /// `<100` → below 100; nil when `rest` is no comparison (then `price…` is a word).
    private static func priceBound(_ rest: String) throws(Problem) -> PriceBound? {
        guard let comparison = PriceBound.Comparison.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count })
            .first(where: { rest.hasPrefix($0.rawValue) }) else { return nil }
        let number = rest.dropFirst(comparison.rawValue.count)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let amount = Decimal(string: String(number), locale: Locale(identifier: "en_US_POSIX")) else {
            throw Problem(description: "price\(rest): give a number after \(comparison.rawValue), e.g. price\(comparison.rawValue)100")
        }
        guard PriceMicros.micros(amount) != nil else {
            throw Problem(description: "price\(rest): give at most six decimals")
        }
        return PriceBound(comparison: comparison, amount: amount)
    }

    /// The query's pieces: runs of non-space text, or quoted phrases (an unclosed quote
    /// runs to the end); a leading `-` negates either.
    private static func pieces(of text: String) -> [(text: String, quoted: Bool, negated: Bool)] {
        var pieces: [(String, Bool, Bool)] = []
        var index = text.startIndex
        while index < text.endIndex {
            if text[index].isWhitespace { index = text.index(after: index); continue }
            var negated = false
            if text[index] == "-", text.index(after: index) < text.endIndex, !text[text.index(after: index)].isWhitespace {
                negated = true
                index = text.index(after: index)
            }
            if text[index] == "\"" {
                let start = text.index(after: index)
                let end = text[start...].firstIndex(of: "\"") ?? text.endIndex
                pieces.append((String(text[start..<end]), true, negated))
                index = end < text.endIndex ? text.index(after: end) : end
            } else {
                let end = text[index...].firstIndex(where: \.isWhitespace) ?? text.endIndex
                pieces.append((String(text[index..<end]), false, negated))
                index = end
            }
        }
        return pieces
    }

    /// The searched text of a card, as tokens: its title, and the rest (summary, author,
    /// tags, source id), each a column of its own.
    public static func document(of card: Card) -> (title: [String], body: [String]) {
        var rest = [card.summary ?? "", card.author?.name ?? ""] + card.tags
        rest.append(card.source)
        return (SearchText.tokens(card.title), SearchText.tokens(rest.joined(separator: " \n ")))
    }

    /// Whether `card` is found.
    public func matches(_ card: Card) -> Bool {
        guard sources.isEmpty || sources.contains(card.source), kinds.isEmpty || kinds.contains(card.kind) else { return false }
        if !prices.isEmpty {
            // Compared as the stores' price indexes hold it: in whole millionths.
            guard let amount = card.price?.amount, PriceMicros.micros(amount) != nil, prices.allSatisfy({ $0.admits(amount) }) else { return false }
        }
        let document = Self.document(of: card)
        func found(_ term: [String]) -> Bool { Self.contains(document.title, term) || Self.contains(document.body, term) }
        return required.allSatisfy(found) && !excluded.contains(where: found)
    }

    /// Whether the title holds every word and phrase asked for (ranked first).
    public func matchesTitle(_ card: Card) -> Bool {
        let title = SearchText.tokens(card.title)
        return required.allSatisfy { Self.contains(title, $0) }
    }

    /// `cards` found, best first (see the type's documentation).
    public func ranked(_ cards: [(card: Card, firstSeen: Date)]) -> [Card] {
        cards.filter { matches($0.card) }
            .map { (card: $0.card, inTitle: matchesTitle($0.card), newest: Self.second(of: $0.card.published ?? $0.firstSeen)) }
            .sorted { a, b in
                if a.inTitle != b.inTitle { return a.inTitle }
                if a.newest != b.newest { return a.newest > b.newest }
                return a.card.id < b.card.id
            }
            .map(\.card)
    }

    /// The second a card is ranked by: whole seconds since 1970, from 0 to 2⁴⁰ - 1 (a date
    /// outside is ranked at the nearer end). SQLite's search index is ordered by it.
    public static func second(of date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds >= Double(latestSecond) ? latestSecond : Int64(seconds)
    }

    /// The latest second ``second(of:)`` gives (about the year 36,812).
    public static let latestSecond: Int64 = (1 << 40) - 1

    /// Whether `tokens` holds `term`'s tokens one after another.
    static func contains(_ tokens: [String], _ term: [String]) -> Bool {
        guard !term.isEmpty, tokens.count >= term.count else { return false }
        if term.count == 1 { return tokens.contains(term[0]) }
        return (0...(tokens.count - term.count)).contains { start in tokens[start..<start + term.count].elementsEqual(term) }
    }
}

/// Text as search sees it: lower-case words without accents, split at everything that is
/// not a letter or digit; words longer than ``maxTokenBytes`` are left out. Both stores
/// index these tokens, joined by spaces, so that SQLite's and PostgreSQL's own word rules
/// have nothing left to decide.
public enum SearchText {
    /// Longer "words" (a base64 blob, a URL's path) are no words a person searches for, and
    /// PostgreSQL takes none over 2,046 bytes.
    public static let maxTokenBytes = 200

    public static func tokens(_ text: String) -> [String] {
        // ASCII, most of every card, is split and lower-cased byte by byte; a run with other
        // characters is folded by Foundation (folding every text was a third of a cold
        // refresh of 500 feeds).
        var tokens: [String] = []
        var current: [UInt8] = []
        var needsFolding = false
        func flush() {
            guard !current.isEmpty else { return }
            if needsFolding {
                tokens += folded(String(decoding: current, as: UTF8.self))
            } else if current.count <= maxTokenBytes {
                tokens.append(String(decoding: current, as: UTF8.self))
            }
            current.removeAll(keepingCapacity: true)
            needsFolding = false
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"): current.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): current.append(byte | 0x20)
            case 0x80...:
                current.append(byte)
                needsFolding = true
            default: flush()
            }
        }
        flush()
        return tokens
    }

    /// The tokens of a run holding characters beyond ASCII.
    static func folded(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        func flush() {
            if !current.isEmpty, String(current).utf8.count <= maxTokenBytes { tokens.append(String(current)) }
            current = String.UnicodeScalarView()
        }
        for scalar in folded.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber, .letterNumber, .otherNumber:
                current.append(scalar)
            default:
                flush()
            }
        }
        flush()
        return tokens
    }
}
