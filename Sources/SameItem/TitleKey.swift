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
        var title = title
        if title.withUTF8({ $0.contains { $0 >= 0x80 } }) {
            // Accents and other scripts: Foundation's folding, then the same byte walk.
            title = TitleWords(title).all.joined(separator: " ")
        }
        (words, numbers) = title.withUTF8(Self.keys)
    }

    /// The words and numbers of a title's bytes, each hashed as it is read, folded to
    /// lower case, a stem's hash made again only for a word with an ending: copying the
    /// title and each word out of it was half of matching a run's 25,000 titles.
    private static func keys(_ bytes: UnsafeBufferPointer<UInt8>) -> (words: [UInt64], numbers: [UInt64]) {
        @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }
        let (stopWords, stopBits) = (Self.stopWords, Self.stopBits)
        var numbers: [UInt64] = []
        let words = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: bytes.count / 2 + 1) { found in
            var count = 0
            var start = -1
            var hasDigit = false
            var hash = FNV1a.seed
            func finish(_ end: Int) {
                defer { start = -1; hasDigit = false; hash = FNV1a.seed }
                guard start >= 0 else { return }
                if hasDigit { numbers.append(hash) }
                let length = end - start
                guard length > 1 || hasDigit else { return }
                if !hasDigit, stopBits[Int(hash & 1023) >> 6] & (1 << (hash & 63)) != 0, stopWords.contains(hash) { return }
                let ending = stemEnding(bytes, start..<end)
                found[count] = ending == 0 ? hash : stemHash(bytes, start..<(end - ending))
                count += 1
            }
            for index in bytes.indices {
                let byte = bytes[index]
                let lowered = lower(byte)
                let isLetter = lowered >= 97 && lowered <= 122 || byte >= 0x80
                // A point or comma between digits belongs to the number (`18.1`, `14,000`).
                let joins = (byte == 46 || byte == 44) && start >= 0 && hasDigit && index + 1 < bytes.count && isDigit(bytes[index + 1])
                if isLetter || isDigit(byte) || joins {
                    if start < 0 { start = index }
                    hash = FNV1a.step(hash, joins ? 46 : lowered)
                    hasDigit = hasDigit || isDigit(byte)
                } else {
                    finish(index)
                }
            }
            finish(bytes.count)
            return sortedOnce(UnsafeMutableBufferPointer(rebasing: found[..<count]))
        }
        return (words, numbers.isEmpty ? numbers : numbers.withUnsafeMutableBufferPointer { sortedOnce($0) })
    }

    /// `hashes` sorted, each once (a title's dozen words: sorting beats hashing them into a set).
    private static func sortedOnce(_ hashes: UnsafeMutableBufferPointer<UInt64>) -> [UInt64] {
        var hashes = hashes
        hashes.sort()
        var kept = 0
        for hash in hashes where kept == 0 || hashes[kept - 1] != hash {
            hashes[kept] = hash
            kept += 1
        }
        return Array(hashes[..<kept])
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

    /// How many bytes ``TitleWords/stem(_:)`` takes off the word at `range` of `bytes`
    /// (compared without case).
    static func stemEnding(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int {
        guard range.count > 4 else { return 0 }
        let last = lower(bytes[range.upperBound - 1])
        guard last >= 97 && last <= 122 else { return 0 }
        for ending in endings where range.count - ending.count >= 3 {
            var at = range.upperBound - ending.count
            var matches = true
            for byte in ending {
                if lower(bytes[at]) != byte { matches = false; break }
                at += 1
            }
            if matches { return ending.count }
        }
        return 0
    }

    /// The hash of a stem's bytes as the walk hashes its word: folded to lower case, a
    /// comma between digits read as a point.
    private static func stemHash(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64 {
        var hash = FNV1a.seed
        for at in range {
            let byte = bytes[at]
            hash = FNV1a.step(hash, byte == 44 ? 46 : lower(byte))
        }
        return hash
    }

    @inline(__always) static func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }

    static let endings: [[UInt8]] = ["ing", "ies", "ed", "es", "s"].map { Array($0.utf8) }
    static let stopWords = Set(TitleWords.stopWords.map { FNV1a.hash($0) })
    /// A word's hash whose bit is clear here is no stop word: most words are known without
    /// hashing the hash into the set.
    static let stopBits: [UInt64] = stopWords.reduce(into: [UInt64](repeating: 0, count: 16)) { bits, hash in
        bits[Int(hash & 1023) >> 6] |= 1 << (hash & 63)
    }
}
