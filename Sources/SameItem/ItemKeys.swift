import FeedCore
import FeedSupport

/// What a card can be found by as a copy of another: ``ItemMatcher``'s signals as hashed
/// keys — its canonical links and its product codes (strong keys: one shared is enough to
/// be a candidate) and, for a dated post with enough significant words, each of its
/// title's words (a candidate shares at least ``leastSharedWords`` of them). A card store
/// keeps them beside each card, so that the copies of a page's cards are looked up by key
/// instead of found by comparing every kept card; ``ItemMatcher`` then decides which
/// candidates are one item. Two cards the matcher would join by a rule are candidates of
/// each other; being one proves nothing.
public enum ItemKeys {
    /// A key more cards share than this finds none: a word that common says nothing of a
    /// subject (``ItemMatcher/commonWord``), and a link or code that common is no one item's.
    public static let widest = ItemMatcher.commonWord

    /// The title words two posts share at the least when the matcher joins them by title:
    /// shared ≥ 0.6 × (all of both − shared) means shared ≥ 0.375 × (|A| + |B|), and each
    /// title has at least 5 words, so shared ≥ 3.75.
    public static let leastSharedWords = 4

    /// `card`'s keys, sorted, each once. A title word's key is odd, a strong key even.
    public static func of(_ card: Card) -> [Int64] {
        var keys = ItemMatcher.links(of: card).map { strong("link", $0) }
        keys += ItemMatcher.codes(of: card).map { strong("code", $0.0) }
        if let title = ItemMatcher.titleKey(of: card) {
            keys += title.words.map { word in Int64(bitPattern: word | 1) }
        }
        return Array(Set(keys)).sorted()
    }

    /// Whether `key` is a title word's (else a link's or a code's).
    public static func isWord(_ key: Int64) -> Bool {
        key & 1 == 1
    }

    /// Whether a card that shares `strong` strong keys and `words` title words with the
    /// asked cards is a candidate (PostgreSQL's stores say the same in SQL).
    public static func isCandidate(strong: Int, words: Int) -> Bool {
        strong > 0 || words >= leastSharedWords
    }

    /// The holders of `keys` that are candidates: each key's holders (`holders`, by key)
    /// counted as the strong keys and title words they share, a key more than ``widest``
    /// hold counting for none. What every store's lookup does over its own key table.
    public static func candidates<Holder: Hashable>(sharing keys: some Sequence<Int64>, holders: [Int64: [Holder]]) -> Set<Holder> {
        var shared: [Holder: (strong: Int, words: Int)] = [:]
        for key in keys {
            guard let held = holders[key], held.count <= widest else { continue }
            for holder in held {
                if isWord(key) { shared[holder, default: (0, 0)].words += 1 } else { shared[holder, default: (0, 0)].strong += 1 }
            }
        }
        return Set(shared.filter { isCandidate(strong: $0.value.strong, words: $0.value.words) }.keys)
    }

    private static func strong(_ kind: String, _ value: String) -> Int64 {
        Int64(bitPattern: FNV1a.hash(value.utf8, seed: FNV1a.hash(kind)) & ~1)
    }
}
