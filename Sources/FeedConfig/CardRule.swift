import FeedCore
import Foundation

/// One filter rule of Sources.yml: a few tests on a card, all of which must hold
/// (`{field: title, match: "(?i)sponsored"}`, `{price: {below: 50}}`).
public struct CardRule: Sendable, CustomStringConvertible {
    /// The card fields a rule's expression can read.
    public enum Field: String, Sendable, CaseIterable {
        case title, summary, url, author, tags, kind, id
    }

    /// One test on a card.
    public enum Test: Sendable {
        /// The field matches the expression (for `tags`: any tag does). A card without the
        /// field does not match.
        case matches(Field, CardPattern)
        /// The price is below / above the amount; a card without a price matches neither.
        case priceBelow(Decimal)
        case priceAbove(Decimal)
        /// Published within / before the last so many seconds; a card without a date
        /// matches neither.
        case newerThan(Double, written: String)
        case olderThan(Double, written: String)
        /// The price is in this currency (ISO 4217).
        case currency(String)
    }

    public var tests: [Test]
    /// Where the rule is written, for messages.
    public var location: ConfigLocation

    public init(tests: [Test], location: ConfigLocation) {
        self.tests = tests
        self.location = location
    }

    /// Whether every test holds for `card` at time `now`; an expression that ran out of
    /// time counts as no match.
    public func matches(_ card: Card, now: Date) -> Bool {
        evaluate(card, now: now) == .matched
    }

    /// Whether every test holds for `card` at time `now`, and whether an expression ran
    /// out of time deciding it.
    public func evaluate(_ card: Card, now: Date) -> CardPattern.Outcome {
        var outOfTime = false
        let holds = tests.allSatisfy { test in
            switch test {
            case .matches(let field, let pattern):
                return Self.values(of: field, in: card).contains { value in
                    switch pattern.evaluate(value) {
                    case .matched: return true
                    case .notMatched: return false
                    case .outOfTime:
                        outOfTime = true
                        return false
                    }
                }
            case .priceBelow(let limit):
                return card.price.map { $0.amount < limit } ?? false
            case .priceAbove(let limit):
                return card.price.map { $0.amount > limit } ?? false
            case .newerThan(let seconds, _):
                return card.published.map { now.timeIntervalSince($0) <= seconds } ?? false
            case .olderThan(let seconds, _):
                return card.published.map { now.timeIntervalSince($0) > seconds } ?? false
            case .currency(let code):
                return card.price?.currency?.uppercased() == code
            }
        }
        return holds ? .matched : outOfTime ? .outOfTime : .notMatched
    }

    static func values(of field: Field, in card: Card) -> [String] {
        switch field {
        case .title: [card.title]
        case .summary: card.summary.map { [$0] } ?? []
        case .url: card.url.map { [$0.absoluteString] } ?? []
        case .author: card.author.map { [$0.name] } ?? []
        case .tags: card.tags
        case .kind: [card.kind.rawValue]
        case .id: [card.id]
        }
    }

    /// The rule as Sources.yml would write it: `{field: title, match: "(?i)sponsored"}`.
    public var description: String {
        var parts: [String] = []
        var price: [String] = []
        var published: [String] = []
        for test in tests {
            switch test {
            case .matches(let field, let pattern): parts.append("field: \(field.rawValue), match: \(Self.quoted(pattern.expression))")
            case .priceBelow(let amount): price.append("below: \(amount)")
            case .priceAbove(let amount): price.append("above: \(amount)")
            case .newerThan(_, let written): published.append("newer_than: \(written)")
            case .olderThan(_, let written): published.append("older_than: \(written)")
            case .currency(let code): parts.append("currency: \(code)")
            }
        }
        if !price.isEmpty { parts.append("price: {\(price.joined(separator: ", "))}") }
        if !published.isEmpty { parts.append("published: {\(published.joined(separator: ", "))}") }
        return "{\(parts.joined(separator: ", "))}"
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// A regular expression of a rule, case-insensitive unless it says otherwise (`(?-i)`).
/// ICU's engine (`NSRegularExpression`) backtracks, and a backtracking engine can take
/// exponential time on ordinary text (`(.|\s)*sponsored` on a 60-word summary), so three
/// things bound it: an expression with a quantified group that itself holds a quantifier
/// (`(a+)+`) or a back-reference is refused when Sources.yml is read; a field is read no
/// further than its first ``maxCharacters`` characters; and every match stops after
/// ``timeLimit`` of its thread's CPU time, which counts as no match (``Outcome/outOfTime``).
/// ICU calls back as a match moves on (`.reportProgress`), and the callback stops the match
/// once the time is up.
public struct CardPattern: Sendable {
    public let expression: String
    private let regex: NSRegularExpression

    /// The most characters of a field an expression reads.
    public static let maxCharacters = 4096
    /// The most CPU time one match may take. A well-behaved expression takes microseconds on
    /// 4,096 characters; one that needs more is backtracking without end. CPU time, not the
    /// wall clock's: on a busy machine a thread taken off its core for 50 ms had its ordinary
    /// match counted as no match (seen in CI, twice).
    public static let timeLimit: Duration = .milliseconds(50)

    /// What matching one text gave.
    public enum Outcome: Sendable, Equatable {
        case matched, notMatched
        /// Stopped at ``CardPattern/timeLimit``: counted as no match.
        case outOfTime
    }

    /// Why `expression` is refused, in words for a config error.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case syntax(String)
        case nestedQuantifier
        case backReference

        public var description: String {
            switch self {
            case .syntax(let reason):
                "is not a valid regular expression: \(reason)"
            case .nestedQuantifier:
                "repeats a group that itself repeats (like (a+)+), which can take forever on some text; write it without the nesting"
            case .backReference:
                "uses a back-reference (\\1), which can take forever on some text; write it without one"
            }
        }
    }

    public init(_ expression: String) throws(Problem) {
        try Self.check(expression)
        do {
            regex = try NSRegularExpression(pattern: expression, options: [.caseInsensitive])
        } catch {
            throw .syntax("the expression engine refuses it")
        }
        self.expression = expression
    }

    public func matches(_ text: String) -> Bool {
        evaluate(text) == .matched
    }

    /// Matches `text` within ``timeLimit`` of CPU time.
    public func evaluate(_ text: String, timeLimit: Duration = CardPattern.timeLimit) -> Outcome {
        let text = text.count > Self.maxCharacters ? String(text.prefix(Self.maxCharacters)) : text
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeLimit)
        let started = ThreadCPUTime.now()
        var outcome = Outcome.notMatched
        regex.enumerateMatches(in: text, options: [.reportProgress], range: NSRange(text.startIndex..., in: text)) { result, flags, stop in
            if result != nil {
                outcome = .matched
                stop.pointee = true
            } else if flags.contains(.progress), clock.now >= deadline, ThreadCPUTime.now() - started >= timeLimit {
                // The wall clock first: it is read without a system call, and a thread's CPU
                // time is never more than the time that passed.
                outcome = .outOfTime
                stop.pointee = true
            }
        }
        return outcome
    }

    /// Refuses nested quantifiers and back-references; Swift's own parser names a syntax
    /// error better than ICU does.
    static func check(_ expression: String) throws(Problem) {
        do {
            _ = try Regex(expression)
        } catch {
            throw .syntax("\(error)")
        }
        // One frame per open group: whether something inside it repeats.
        var groups: [Bool] = [false]
        let characters = Array(expression)
        var index = 0
        var inClass = false
        /// Whether a quantifier follows at `index`: `*`, `+`, `?` or `{n,m}`.
        func quantifier(at index: Int) -> Bool {
            guard index < characters.count else { return false }
            switch characters[index] {
            case "*", "+", "?": return true
            case "{": return characters[index...].prefix(while: { $0 != "}" }).dropFirst().allSatisfy { $0.isNumber || $0 == "," }
                && characters[index...].contains("}")
            default: return false
            }
        }
        while index < characters.count {
            let character = characters[index]
            if character == "\\" {
                if index + 1 < characters.count, characters[index + 1].isNumber, characters[index + 1] != "0" { throw .backReference }
                if index + 1 < characters.count, characters[index + 1] == "k" { throw .backReference }
                index += 2
                if !inClass, quantifier(at: index) { groups[groups.count - 1] = true }
                continue
            }
            if inClass {
                if character == "]" {
                    inClass = false
                    if quantifier(at: index + 1) { groups[groups.count - 1] = true }
                }
                index += 1
                continue
            }
            switch character {
            case "[":
                inClass = true
                // `[]a]` and `[^]a]`: a `]` first in a class is a literal.
                if index + 1 < characters.count, characters[index + 1] == "^" { index += 1 }
                if index + 1 < characters.count, characters[index + 1] == "]" { index += 1 }
            case "(":
                groups.append(false)
                // `(?i)`, `(?:`: the `?` opens a group form, it is no quantifier.
                if index + 1 < characters.count, characters[index + 1] == "?" { index += 1 }
            case ")" where groups.count > 1:
                let repeatsInside = groups.removeLast()
                if quantifier(at: index + 1) {
                    // `?` (once or not at all) repeats nothing; `*`, `+` and `{n,m}` do.
                    if repeatsInside && characters[index + 1] != "?" { throw .nestedQuantifier }
                    groups[groups.count - 1] = true
                } else if repeatsInside {
                    groups[groups.count - 1] = true
                }
            default:
                if quantifier(at: index + 1) { groups[groups.count - 1] = true }
            }
            index += 1
        }
    }
}

/// The `filters:` of Sources.yml, at the top or on one source: a card passes when it
/// matches any `keep` rule (if there are any) and no `drop` rule.
public struct CardFilter: Sendable {
    public var keep: [CardRule]
    public var drop: [CardRule]

    public init(keep: [CardRule] = [], drop: [CardRule] = []) {
        self.keep = keep
        self.drop = drop
    }

    public var isEmpty: Bool { keep.isEmpty && drop.isEmpty }

    /// Why a card did not pass.
    public enum Verdict: Sendable, Equatable {
        case passes
        /// Matched the drop rule at this index.
        case dropped(Int)
        /// There are keep rules and it matched none.
        case notKept
    }

    public func verdict(_ card: Card, now: Date) -> Verdict {
        evaluate(card, now: now).verdict
    }

    /// The verdict on `card`, and the rules that ran out of time deciding it (each counted
    /// as no match). The rules at `skipping` are not tried: they count as no match too.
    public func evaluate(_ card: Card, now: Date, skipping: Set<ConfigLocation> = []) -> (verdict: Verdict, outOfTime: [CardRule]) {
        var outOfTime: [CardRule] = []
        func holds(_ rule: CardRule) -> Bool {
            if skipping.contains(rule.location) { return false }
            switch rule.evaluate(card, now: now) {
            case .matched: return true
            case .notMatched: return false
            case .outOfTime:
                outOfTime.append(rule)
                return false
            }
        }
        if !keep.isEmpty, !keep.contains(where: holds) { return (.notKept, outOfTime) }
        if let index = drop.firstIndex(where: holds) { return (.dropped(index), outOfTime) }
        return (.passes, outOfTime)
    }

    /// The rules as lines for `aggregate sources`: `keep {price: {below: 400}}`.
    public var lines: [String] {
        keep.map { "keep \($0)" } + drop.map { "drop \($0)" }
    }
}
