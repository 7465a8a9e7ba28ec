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
