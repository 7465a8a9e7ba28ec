import FeedCore
import FeedSupport
import Foundation

/// One item across sources: which cards of a run (or of the store) are the same story or
/// product, strongest signal first — a person's decision, the same canonical link (or a
/// GUID that is one), the same GTIN or brand and part number with the same variant words,
/// near-identical titles of posts published within 48 hours. Each signal is looked up in
/// a hash index (titles through their rarer words), never by comparing every pair, so the
/// cost grows with the cards, not their square. Never joined: two cards of one source
/// (unless a person says so), cards a person keeps apart, anything whose numbers or
/// variants disagree, and titles that name different things or say opposite ones.
public struct ItemMatcher: Sendable {
    /// Titles at least this alike (shared words over all words) are one story.
    public static let titleLikeness = 0.6
    /// Each title must have this many significant words to be compared at all.
    public static let leastTitleWords = 5
    /// Posts further apart in time than this are never one story by their titles.
    public static let titleWindow: TimeInterval = 48 * 3600
    /// A word in more cards than this finds no candidates (it says nothing of a subject),
    /// and a link or code that many share is no one item's (a shop's every item linking
    /// its front page): as the card store's keys (``ItemKeys/widest``). It also bounds
    /// what one key costs: the cards holding it are tried against each other.
    public static let commonWord = 64

    /// Why two cards were joined.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// A person said so (`aggregate same`).
        case decided
        /// The same canonical link.
        case link(String)
        /// The same GTIN (as 14 digits).
        case gtin(String)
        /// The same brand and part number.
        case part(String)
        /// Near-identical titles, this alike.
        case titles(Double)

        public var description: String {
            switch self {
            case .decided: "joined by a person (aggregate same)"
            case .link(let link): "the same link (\(link))"
            case .gtin(let gtin): "the same GTIN \(gtin)"
            case .part(let part): "the same brand and part number (\(part))"
            case .titles(let likeness): "titles \(Int((likeness * 100).rounded()))% alike, published within 48 hours"
            }
        }
    }

    /// Two cards joined, and why.
    public struct Join: Sendable, Equatable {
        public var first: String
        public var second: String
        public var reason: Reason
    }

    /// Cards that are one item: indices into the cards given, the earliest first; the
    /// joins that made it.
    public struct Item: Sendable, Equatable {
        public var members: [Int]
        public var joins: [Join]
    }

    public let decisions: ItemDecisions

    public init(decisions: ItemDecisions = ItemDecisions()) {
        self.decisions = decisions
    }

    /// The items of two or more cards among `cards`. `rank` orders a card within its item
    /// (lower first: its first-seen time and its source's place in Sources.yml; by default
    /// its place in `cards`, the feed's order).
    public func items(_ cards: [Card], rank: (Int) -> (Double, Int) = { (Double($0), 0) }) -> [Item] {
        matched(CardsInLists(lists: [cards], order: cards.indices.map { (0, Int32($0)) }), rank: rank)
    }

    /// ``items(_:rank:)`` of cards kept in several lists.
    public func items(_ cards: CardsInLists, rank: (Int) -> (Double, Int) = { (Double($0), 0) }) -> [Item] {
        matched(cards, rank: rank)
    }

    private func matched(_ cards: CardsInLists, rank: (Int) -> (Double, Int)) -> [Item] {
        // Each card is read once, into what the signals need, which the passes below read
        // several times each.
        let facts = Self.facts(of: cards)
        let ids = cards.indices.map { cards.withCard(at: $0) { $0.pointee.id } }
        let sources = cards.indices.map { cards.withCard(at: $0) { $0.pointee.source } }
        var groups = Groups(ids: ids, sources: sources, decisions: decisions)
        if !decisions.same.isEmpty {
            let index = Dictionary(groups.ids.indices.map { (groups.ids[$0], $0) }, uniquingKeysWith: { first, _ in first })
            for group in decisions.same {
                let members = group.compactMap { index[$0] }
                for member in members.dropFirst() { groups.join(members[0], member, .decided, decided: true) }
            }
        }
        // Cards with the same hash of a link are compared by the links themselves (read
        // again for those few cards): a hash that two links share proves nothing.
        var linkKeys: [(UInt64, Int)] = []
        linkKeys.reserveCapacity(facts.count)
        for (index, fact) in facts.enumerated() {
            if let link = fact.link { linkKeys.append((link, index)) }
            if let guid = fact.guidLink { linkKeys.append((guid, index)) }
        }
        joinBy(linkKeys, &groups) { earlier, index, hash in
            let theirs = Self.links(of: cards[earlier])
            return Self.links(of: cards[index]).first { Self.linkHash($0) == hash && theirs.contains($0) }.map(Reason.link)
        }
        // Variant words are read only for cards that share a code.
        var variants: [Int: Set<String>] = [:]
        func variant(_ index: Int) -> Set<String> {
            if let known = variants[index] { return known }
            let found = ProductCode.variants(in: TitleWords(cards[index].title).all)
            variants[index] = found
            return found
        }
        let codeKeys = facts.indices.flatMap { index in facts[index].codes.map { ($0.0, index) } }
        joinBy(codeKeys, &groups) { earlier, index, code in
            let (mine, theirs) = (variant(earlier), variant(index))
            guard mine.isEmpty || theirs.isEmpty || mine == theirs else { return nil }
            return facts[index].codes.first { $0.0 == code }?.1
        }
        joinByTitles(facts, &groups) { cards[$0].title }
        return groups.items(rank: rank)
    }

    /// Cards per task when their facts are read on every core.
    static let factsBlock = 2048

    /// The facts of `cards`, in order: most of matching a run's cards (their canonical
    /// links, codes and title words), read a block per task on every core, as the output
    /// writes its lines; the joins after it are hash lookups.
    private static func facts(of cards: CardsInLists) -> [Facts] {
        let count = (cards.count + factsBlock - 1) / factsBlock
        guard count > 1 else { return cards.indices.map { cards.withCard(at: $0, Facts.init) } }
        let total = cards.count
        // Each fact is made in its place in the array (joining blocks copied each once more).
        return [Facts](unsafeUninitializedCapacity: total) { buffer, initialized in
            // Each task initializes its own block only, and reads the cards only.
            nonisolated(unsafe) let slots = buffer
            DispatchQueue.concurrentPerform(iterations: count) { block in
                for index in (block * factsBlock)..<min((block + 1) * factsBlock, total) {
                    slots.initializeElement(at: index, to: cards.withCard(at: index, Facts.init))
                }
            }
            initialized = total
        }
    }

    /// What the signals read of one card (its id, source and title are read from the card
    /// where a join needs them).
    private struct Facts {
        /// A post with a date: its title may join it to another's.
        let published: Date?
        /// The hash of its canonical link (``ItemMatcher/linkHash(_:)``), and of its
        /// GUID's where that is another link.
        let link: UInt64?
        let guidLink: UInt64?
        /// Its GTIN and its brand and part number, where it has them.
        let codes: [(String, Reason)]
        /// A dated post's title words, when it has enough to be compared.
        let titleKey: TitleKey?

        // Read field by field where the card lies: a card taken whole, even borrowed, was
        // copied, each of its fields retained and released.
        init(_ card: UnsafePointer<Card>) {
            published = card.pointee.kind == .post ? card.pointee.published : nil
            // The GUID (``Card/upstreamID``) read in place: its getter took the card whole.
            let (id, source) = (card.pointee.id, card.pointee.source)
            (link, guidLink) = ItemMatcher.linkHashes(url: card.pointee.url, guid: id.dropFirst(source.count + 1))
            codes = ItemMatcher.codes(in: card.pointee.details)
            titleKey = published == nil ? nil : ItemMatcher.titleKey(card.pointee.title)
        }
    }

    /// A post's date: a dated post's title may join it to another's.
    static func titleDate(of card: Card) -> Date? {
        card.kind == .post ? card.published : nil
    }

    /// A dated post's title words, when it has enough of them to be compared.
    static func titleKey(of card: Card) -> TitleKey? {
        titleDate(of: card) == nil ? nil : titleKey(card.title)
    }

    /// A title's words, when it has enough of them to be compared.
    static func titleKey(_ title: String) -> TitleKey? {
        let key = TitleKey(title)
        return key.words.count >= leastTitleWords ? key : nil
    }

    /// A card's canonical link, and its GUID's where that is another link.
    static func links(of card: Card) -> [String] {
        let link = card.url.map(\.absoluteString)
        let guid = card.upstreamID
        // A GUID that is the link itself says nothing more.
        let links = [link, guid == link ? nil : guid].compactMap { $0 }.compactMap(CanonicalLink.canonical)
        return links.count == 2 && links[0] == links[1] ? [links[0]] : links
    }

    /// The hashes of ``links(of:)`` of a card with this link and GUID, made without
    /// making the links.
    static func linkHashes(url: URL?, guid: Substring) -> (UInt64?, UInt64?) {
        let link = url.map(\.absoluteString)
        let hashes = (link.flatMap { CanonicalLink.hash($0) }, link.map { guid == $0[...] } == true ? nil : CanonicalLink.hash(guid))
        switch hashes {
        case (nil, let other): return (other, nil)
        case (let one?, let other): return (one, other == one ? nil : other)
        }
    }

    /// What finds the cards whose canonical links may be `link`.
    static func linkHash(_ link: String) -> UInt64 {
        FNV1a.hash(link.utf8)
    }

    /// A card's GTIN and its brand and part number, where it has them.
    static func codes(of card: Card) -> [(String, Reason)] {
        codes(in: card.details)
    }

    /// ``codes(of:)`` of a card's details.
    static func codes(in details: [String: JSONValue]) -> [(String, Reason)] {
        let (gtin, part) = ProductCode.codes(in: details)
        // Most cards have neither: no array is made for them.
        guard gtin != nil || part != nil else { return [] }
        return [gtin.map { ($0, Reason.gtin($0)) }, part.map { ($0, Reason.part($0)) }].compactMap { $0 }
    }

    /// Joins cards that share a key (`keys`: each key a card holds, by the card's index, in
    /// the order of the cards), with the reason `reason` gives an earlier card and a later
    /// one sharing a key, or not when it gives none (the first card with a key is the one
    /// the others are joined to).
    private func joinBy<Key: Hashable>(_ keys: [(Key, Int)], _ groups: inout Groups,
                                       reason: (_ earlier: Int, _ index: Int, Key) -> Reason?) {
        // A key more cards hold than a common word joins none of them; most keys one card
        // holds, which joins none either.
        var holding: [Key: Int] = [:]
        holding.reserveCapacity(keys.count)
        for (key, _) in keys { holding[key, default: 0] += 1 }
        let shared = Set(holding.lazy.filter { $0.value > 1 && $0.value <= Self.commonWord }.map(\.key))
        guard !shared.isEmpty else { return }
        // Each key's holders in order, the first apart.
        var holders: [Key: (first: Int, more: [Int])] = [:]
        for (key, index) in keys where shared.contains(key) {
            guard let held = holders[key] else {
                holders[key] = (index, [])
                continue
            }
            func joined(_ earlier: Int) -> Bool {
                guard let why = reason(earlier, index, key) else { return false }
                return groups.join(earlier, index, why)
            }
            if !joined(held.first) {
                for earlier in held.more where joined(earlier) { break }
            }
            holders[key]?.more.append(index)
        }
    }

    /// Posts whose titles are near-identical, found through their rarer words: hashed
    /// words (``TitleKey``) find and measure the pairs; the words themselves
    /// (``TitleWords``) are read only for a pair that is alike enough, to see whether the
    /// two name different things or say opposite ones.
    private func joinByTitles(_ facts: [Facts], _ groups: inout Groups, title: (Int) -> String) {
        // Each word's postings (the cards holding it, in order) in one flat array, a word
        // numbered as first met: an array per word was most of this pass.
        var numbers: [UInt64: Int32] = [:]
        var counts: [Int32] = []
        var wordsOf: [Int32] = []
        var firstWordOf = [Int](repeating: 0, count: facts.count + 1)
        for index in facts.indices {
            firstWordOf[index] = wordsOf.count
            // Read with the card's other facts, on every core.
            guard let key = facts[index].titleKey else { continue }
            for word in key.words {
                let number = numbers[word] ?? {
                    counts.append(0)
                    numbers[word] = Int32(counts.count - 1)
                    return Int32(counts.count - 1)
                }()
                counts[Int(number)] += 1
                wordsOf.append(number)
            }
        }
        firstWordOf[facts.count] = wordsOf.count
        var starts = [Int](repeating: 0, count: counts.count + 1)
        for (number, count) in counts.enumerated() { starts[number + 1] = starts[number] + Int(count) }
        var filled = starts
        var postings = [Int32](repeating: 0, count: wordsOf.count)
        for index in facts.indices {
            for number in wordsOf[firstWordOf[index]..<firstWordOf[index + 1]] {
                postings[filled[Int(number)]] = Int32(index)
                filled[Int(number)] += 1
            }
        }
        var candidates: [Int32] = []
        for index in facts.indices {
            guard let key = facts[index].titleKey else { continue }
            candidates.removeAll(keepingCapacity: true)
            for number in wordsOf[firstWordOf[index]..<firstWordOf[index + 1]] where counts[Int(number)] <= Self.commonWord {
                // In order: the earlier cards holding the word come first.
                for other in postings[starts[Int(number)]..<starts[Int(number) + 1]] {
                    guard other < index else { break }
                    candidates.append(other)
                }
            }
            candidates.sort()
            var previous: Int32 = -1
            for other in candidates where other != previous {
                previous = other
                let other = Int(other)
                guard let theirs = facts[other].titleKey, theirs.numbers == key.numbers,
                      let mine = facts[index].published, let their = facts[other].published,
                      abs(mine.timeIntervalSince(their)) <= Self.titleWindow else { continue }
                let likeness = key.likeness(to: theirs)
                guard likeness >= Self.titleLikeness, !TitleWords(title(index)).contradicts(TitleWords(title(other))) else { continue }
                groups.join(other, index, .titles(likeness))
            }
        }
    }
}

/// What people decided, which always beats the rules: cards they joined, and pairs they
/// keep apart (by card id).
public struct ItemDecisions: Sendable, Equatable {
    /// Groups of card ids a person said are one item.
    public var same: [[String]]
    /// Pairs of card ids a person said are not (each pair sorted).
    public var apart: Set<[String]>

    public init(same: [[String]] = [], apart: Set<[String]> = []) {
        self.same = same
        self.apart = apart
    }

    /// Whether `a` and `b` are kept apart.
    public func keepsApart(_ a: String, _ b: String) -> Bool {
        apart.contains([a, b].sorted())
    }
}

/// Union-find over a run's cards (by index: their ids and sources), with the rules no
/// join may break.
struct Groups {
    let ids: [String]
    let sources: [String]
    let decisions: ItemDecisions
    private var parent: [Int]
    private var members: [Int: [Int]] = [:]
    private var joins: [Int: [ItemMatcher.Join]] = [:]
    /// Cards a decision keeps apart from some other card, by index.
    private let constrained: Set<Int>

    init(ids: [String], sources: [String], decisions: ItemDecisions) {
        self.ids = ids
        self.sources = sources
        self.decisions = decisions
        parent = Array(ids.indices)
        let apartIDs = Set(decisions.apart.flatMap { $0 })
        constrained = Set(ids.indices.filter { apartIDs.contains(ids[$0]) })
    }

    mutating func root(_ index: Int) -> Int {
        var node = index
        while parent[node] != node {
            parent[node] = parent[parent[node]]
            node = parent[node]
        }
        return node
    }

    private func group(_ root: Int) -> [Int] {
        members[root] ?? [root]
    }

    /// Joins the items of `a` and `b` unless a rule forbids it; whether they are one now.
    @discardableResult
    mutating func join(_ a: Int, _ b: Int, _ reason: ItemMatcher.Reason, decided: Bool = false) -> Bool {
        let (rootA, rootB) = (root(a), root(b))
        if rootA == rootB { return true }
        let (groupA, groupB) = (group(rootA), group(rootB))
        if !decided {
            let sourcesA = Set(groupA.map { sources[$0] })
            if groupB.contains(where: { sourcesA.contains(sources[$0]) }) { return false }
        }
        for x in groupA where constrained.contains(x) {
            for y in groupB where decisions.keepsApart(ids[x], ids[y]) { return false }
        }
        parent[rootB] = rootA
        members[rootA] = groupA + groupB
        members[rootB] = nil
        joins[rootA, default: []] += (joins.removeValue(forKey: rootB) ?? []) + [ItemMatcher.Join(first: ids[a], second: ids[b], reason: reason)]
        return true
    }

    func items(rank: (Int) -> (Double, Int)) -> [ItemMatcher.Item] {
        members.keys.sorted().compactMap { root in
            guard let group = members[root], group.count > 1 else { return nil }
            let ordered = group.sorted { (rank($0).0, rank($0).1, $0) < (rank($1).0, rank($1).1, $1) }
            return ItemMatcher.Item(members: ordered, joins: joins[root] ?? [])
        }.sorted { $0.members[0] < $1.members[0] }
    }
}
