import Foundation

/// A title as the words that carry its subject: case and accents folded, punctuation
/// dropped (a number keeps its point: `18.1`), stop words left out, and the commonest
/// English endings taken off (`released`, `releases` and `release` are one word), so two
/// outlets' headlines of one story compare by what they say.
public struct TitleWords: Sendable, Equatable {
    /// The significant words, stemmed.
    public let words: Set<String>
    /// The words holding a digit, as written: two titles must agree on every one
    /// ("iOS 18.1 released" is not "iOS 18.2 released").
    public let numbers: Set<String>
    /// Every word in order, stop words included (variants are read from these).
    public let all: [String]

    /// Names: words written with a capital inside a sentence-case title (`Netflix`,
    /// `WhatsApp`, `Scotland`), lowercased. Two titles that each name something the other
    /// does not speak of different things ("Signal adds usernames" is not "WhatsApp adds
    /// usernames"). Empty for a title in Title Case, whose capitals say nothing.
    public let names: Set<String>

    public init(_ title: String) {
        let folded = title.folding(options: [.diacriticInsensitive, .widthInsensitive], locale: nil)
        var tokens: [String] = []
        var current = ""
        let characters = Array(folded)
        for (index, character) in characters.enumerated() {
            let joinsNumber = (character == "." || character == ",") && !current.isEmpty && current.last?.isNumber == true
                && index + 1 < characters.count && characters[index + 1].isNumber
            if character.isLetter || character.isNumber || joinsNumber {
                current.append(character == "," ? "." : character)
            } else if !current.isEmpty {
                tokens.append(current)
                current = ""
            }
        }
        if !current.isEmpty { tokens.append(current) }
        let lower = tokens.map { $0.lowercased() }
        all = lower
        numbers = Set(lower.filter { $0.contains(where: \.isNumber) })
        words = Set(lower.filter { !Self.stopWords.contains($0) && ($0.count > 1 || $0.first?.isNumber == true) }.map(Self.stem))
        let candidates = zip(tokens, lower).filter { !Self.stopWords.contains($0.1) && $0.1.first?.isLetter == true && $0.1.count > 1 }
        let capitalised = candidates.filter { $0.0.first?.isUppercase == true }
        names = capitalised.count * 10 > candidates.count * 7 ? [] : Set(capitalised.map(\.1))
    }

    /// Whether the two titles each name something the other does not mention, or say
    /// opposite things ("beats" and "misses", "rise" and "fall").
    public func contradicts(_ other: TitleWords) -> Bool {
        let (mine, theirs) = (Set(all), Set(other.all))
        if !names.isSubset(of: theirs) && !other.names.isSubset(of: mine) { return true }
        return Self.opposites.contains { one, two in
            (!mine.isDisjoint(with: one) && !theirs.isDisjoint(with: two) && theirs.isDisjoint(with: one))
                || (!mine.isDisjoint(with: two) && !theirs.isDisjoint(with: one) && theirs.isDisjoint(with: two))
        }
    }

    /// Words that say opposite things of one subject.
    static let opposites: [(Set<String>, Set<String>)] = [
        (["beat", "beats", "tops", "exceeds"], ["miss", "misses", "missed"]),
        (["rise", "rises", "rising", "rose", "climbs", "gains", "jumps", "soars", "up"], ["fall", "falls", "falling", "fell", "drops", "slides", "slumps", "sinks", "down"]),
        (["win", "wins", "won"], ["lose", "loses", "lost"]),
        (["strong", "stronger"], ["weak", "weaker"]),
        (["open", "opens", "opening", "reopens"], ["close", "closes", "closing", "shuts"]),
        (["begin", "begins", "starts"], ["end", "ends", "ending"]),
        (["approves", "approved", "backs"], ["rejects", "rejected", "blocks"]),
    ]

    /// Shared words over all words (Jaccard), 0 when either has none.
    public func likeness(to other: TitleWords) -> Double {
        let union = words.union(other.words).count
        return union == 0 ? 0 : Double(words.intersection(other.words).count) / Double(union)
    }

    static func stem(_ word: String) -> String {
        guard word.count > 4, word.last?.isLetter == true else { return word }
        for ending in ["ing", "ies", "ed", "es", "s"] where word.hasSuffix(ending) && word.count - ending.count >= 3 {
            return String(word.dropLast(ending.count))
        }
        return word
    }

    /// Words that say nothing of a subject (English, as headlines use them).
    static let stopWords: Set<String> = [
        "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is", "are",
        "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "has", "have", "had", "will", "would",
        "can", "could", "should", "may", "might", "into", "over", "after", "before", "about", "up", "down", "out", "off",
        "new", "now", "how", "why", "what", "when", "who", "which", "you", "your", "we", "our", "they", "their", "he", "she",
        "his", "her", "not", "no", "more", "most", "just", "than", "then", "so", "if", "all", "any", "here", "there",
        "says", "said", "report", "reports", "update", "updated", "live", "latest", "breaking", "video", "watch",
    ]
}
