import FeedSupport
/// A title's significant words and numbers as sorted hashes, read from its bytes: what
/// finding candidate pairs among every post of a run needs, at a fraction of the cost of
/// ``TitleWords`` (strings, sets and Foundation's folding for 25,000 titles took four
/// times the run they were merged in). Case is folded for ASCII; a title with other
/// letters is folded by ``TitleWords`` first. ``TitleWords`` itself is made only for
/// the pairs these keys find alike.
struct TitleKey: Sendable {
    /// Hashes of the significant words, stemmed, sorted, each once.
    let words: [UInt64]
    /// Hashes of the words with a digit, sorted, each once.
    let numbers: [UInt64]

    init(_ title: String) {
        var bytes = Array(title.utf8)
        if bytes.contains(where: { $0 >= 0x80 }) {
            // Accents and other scripts: Foundation's folding, then the same byte walk.
            bytes = Array(TitleWords(title).all.joined(separator: " ").utf8)
        }
        var words: [UInt64] = []
        var numbers: [UInt64] = []
        var start = -1
        var hasDigit = false
        func finish(_ end: Int) {
            defer { start = -1; hasDigit = false }
            guard start >= 0 else { return }
            let token = bytes[start..<end]
            if hasDigit { numbers.append(FNV1a.hash(token)) }
            guard token.count > 1 || hasDigit else { return }
            let hash = FNV1a.hash(token)
            if !hasDigit, TitleKey.stopWords.contains(hash) { return }
            words.append(FNV1a.hash(TitleKey.stemmed(token)))
        }
        for index in bytes.indices {
            let byte = bytes[index]
            let lower = byte >= 65 && byte <= 90 ? byte + 32 : byte
            let isLetter = lower >= 97 && lower <= 122 || byte >= 0x80
            let isDigit = byte >= 48 && byte <= 57
            // A point or comma between digits belongs to the number (`18.1`, `14,000`).
            let joins = (byte == 46 || byte == 44) && start >= 0 && hasDigit && index + 1 < bytes.count && bytes[index + 1] >= 48 && bytes[index + 1] <= 57
            if isLetter || isDigit || joins {
                if start < 0 { start = index }
                bytes[index] = joins ? 46 : lower
                hasDigit = hasDigit || isDigit
            } else {
                finish(index)
            }
        }
        finish(bytes.count)
        self.words = Self.sortedOnce(words)
        self.numbers = Self.sortedOnce(numbers)
    }

    /// `hashes` sorted, each once (a title's dozen words: sorting beats hashing them into a set).
    private static func sortedOnce(_ hashes: [UInt64]) -> [UInt64] {
        var hashes = hashes
        hashes.sort()
        var kept = 0
        for hash in hashes where kept == 0 || hashes[kept - 1] != hash {
            hashes[kept] = hash
            kept += 1
        }
        hashes.removeLast(hashes.count - kept)
        return hashes
    }

    /// Shared words over all words, by a walk of the two sorted lists.
    func likeness(to other: TitleKey) -> Double {
        var (i, j, shared) = (0, 0, 0)
        while i < words.count, j < other.words.count {
            if words[i] == other.words[j] { shared += 1; i += 1; j += 1 } else if words[i] < other.words[j] { i += 1 } else { j += 1 }
        }
        let union = words.count + other.words.count - shared
        return union == 0 ? 0 : Double(shared) / Double(union)
    }

    /// ``TitleWords/stem(_:)`` on bytes.
    static func stemmed(_ token: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard token.count > 4, let last = token.last, last >= 97 && last <= 122 else { return token }
        for ending in endings where token.count - ending.count >= 3 && token.suffix(ending.count).elementsEqual(ending) {
            return token.dropLast(ending.count)
        }
        return token
    }

    static let endings: [[UInt8]] = ["ing", "ies", "ed", "es", "s"].map { Array($0.utf8) }
    static let stopWords = Set(TitleWords.stopWords.map { FNV1a.hash($0) })
}
