import FeedCore
import FeedSupport

/// What a card can be found by as a copy of another: ``ItemMatcher``'s signals as hashed
/// keys — its canonical links, its product codes and, for a dated post with enough
/// significant words, each of its title's words. A card store keeps them beside each card,
/// so that the copies of a page's cards are looked up by key instead of found by comparing
/// every kept card; ``ItemMatcher`` then decides which candidates are one item. Two cards
/// the matcher would join share at least one key; sharing one proves nothing.
public enum ItemKeys {
    /// A key more cards share than this finds none: a word that common says nothing of a
    /// subject (``ItemMatcher/commonWord``), and a link or code that common is no one item's.
    public static let widest = ItemMatcher.commonWord

    /// `card`'s keys, sorted, each once.
    public static func of(_ card: Card) -> [Int64] {
        var keys = ItemMatcher.links(of: card).map { key("link", $0) }
        keys += ItemMatcher.codes(of: card).map { key("code", $0.0) }
        if ItemMatcher.titleDate(of: card) != nil {
            let title = TitleKey(card.title)
            if title.words.count >= ItemMatcher.leastTitleWords {
                keys += title.words.map { word in
                    withUnsafeBytes(of: word.littleEndian) { Int64(bitPattern: FNV1a.hash($0, seed: FNV1a.hash("word"))) }
                }
            }
        }
        return Array(Set(keys)).sorted()
    }

    private static func key(_ kind: String, _ value: String) -> Int64 {
        Int64(bitPattern: FNV1a.hash(value.utf8, seed: FNV1a.hash(kind)))
    }
}
