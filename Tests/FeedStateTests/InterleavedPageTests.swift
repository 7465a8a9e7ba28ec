import FeedState
import Testing

/// The Unread view in feed order reads only the first cards of each source that the page
/// needs, and falls back when a source holds fewer than its count said.
@Suite struct InterleavedPageTests {
    // Sources a (3 unread), b (1), c (2): a1 b1 c1 a2 c2 a3.
    let lists = [["a1", "a2", "a3"], ["b1"], ["c1", "c2"]]

    @Test func eachPageReadsTheRoundsUpToItsEnd() {
        let first = InterleavedPage(counts: [3, 1, 2], offset: 0, limit: 2)
        #expect(first.total == 6)
        #expect(first.wanted == [1, 1, 1])
        #expect(first.page(of: [["a1"], ["b1"], ["c1"]]) == ["a1", "b1"])
        let second = InterleavedPage(counts: [3, 1, 2], offset: 2, limit: 2)
        #expect(second.wanted == [2, 1, 2])
        #expect(second.page(of: [["a1", "a2"], ["b1"], ["c1", "c2"]]) == ["c1", "a2"])
        let last = InterleavedPage(counts: [3, 1, 2], offset: 4, limit: 10)
        #expect(last.wanted == [3, 1, 2])
        #expect(last.page(of: lists) == ["c2", "a3"])
    }

    @Test func aPagePastTheEndReadsNothing() {
        let past = InterleavedPage(counts: [3, 1, 2], offset: 6, limit: 2)
        #expect(past.wanted == [0, 0, 0])
        #expect(past.page(of: [[String](), [], []]) == [])
        #expect(InterleavedPage(counts: [], offset: 0, limit: 20).page(of: [[String]]()) == [])
    }

    @Test func countsThatMovedUnderTheReadGiveNoPage() {
        let page = InterleavedPage(counts: [3, 1, 2], offset: 2, limit: 2)
        // c's second unread card was read between the count and the read.
        #expect(page.page(of: [["a1", "a2"], ["b1"], ["c1"]]) == nil)
    }
}

/// A page by source reads the end of one source and the start of the next.
@Suite struct SourceRunsPageTests {
    @Test func thePageIsTheSlicesOfTheSourcesByID() {
        let counts = ["b": 3, "a": 2, "c": 4]
        let page = SourceRunsPage(sources: ["c", "a", "b", "a"], counts: counts, descending: false, offset: 1, limit: 3)
        #expect(page.total == 9)
        #expect(page.slices == [.init(source: "a", skip: 1, take: 1), .init(source: "b", skip: 0, take: 2)])
        let backwards = SourceRunsPage(sources: ["c", "a", "b"], counts: counts, descending: true, offset: 3, limit: 10)
        #expect(backwards.slices == [.init(source: "c", skip: 3, take: 1), .init(source: "b", skip: 0, take: 3), .init(source: "a", skip: 0, take: 2)])
        #expect(SourceRunsPage(sources: ["a"], counts: counts, descending: false, offset: 2, limit: 5).slices == [])
        #expect(SourceRunsPage(sources: ["zz"], counts: counts, descending: false, offset: 0, limit: 5).total == 0)
    }
}

/// Titles order with case and accents folded, and their keys' bytes in the same order.
@Suite struct TitleKeyTests {
    @Test func foldedTitlesTieAndOrderAsTheirBytes() {
        #expect(CardSortKeys.titleKey("Apple") == CardSortKeys.titleKey("apple"))
        #expect(CardSortKeys.titleKey("Éclair") == CardSortKeys.titleKey("eclair"))
        #expect(CardSortKeys.titleKey("Crème Brûlée") == "creme brulee")
        let titles = ["Zebra", "Ürün", "apple", "Éclair", "东京", "Ångström", "banana", "über"]
        let keys = titles.map(CardSortKeys.titleKey)
        #expect(keys.sorted() == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }
}
