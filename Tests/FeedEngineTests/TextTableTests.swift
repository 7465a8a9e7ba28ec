import FeedCore
@testable import FeedEngine
import Testing

@Suite struct TextTableTests {
    @Test func wideCharactersCountTwoColumns() {
        #expect(DisplayWidth.of("abc") == 3)
        #expect(DisplayWidth.of("Airport outfit ✈️") == 17)
        #expect(DisplayWidth.of("Patio season ☀️") == 15)
        #expect(DisplayWidth.of("東京") == 4)
        #expect(DisplayWidth.of("Crème") == 5)
    }

    @Test func columnsAlignWhateverTheTitlesHold() {
        let cards = [
            Card(source: "a", upstreamID: "1", kind: .post, title: "Airport outfit ✈️"),
            Card(source: "a", upstreamID: "2", kind: .post, title: "東京 trip", tags: ["#x"]),
            Card(source: "a", upstreamID: "3", kind: .post, title: "Plain title", tags: ["#y"]),
        ]
        let lines = TextTable(width: nil, color: false).render(cards).split(separator: "\n").map(String.init)
        #expect(lines == ["a:1  Airport outfit ✈️", "a:2  東京 trip          #x", "a:3  Plain title        #y"])
        let narrow = TextTable(width: 16, color: false).render(cards).split(separator: "\n").map(String.init)
        #expect(narrow.allSatisfy { DisplayWidth.of($0) <= 16 + 3 })
        #expect(narrow[1].hasPrefix("a:2  東京 trip"))
    }
}
