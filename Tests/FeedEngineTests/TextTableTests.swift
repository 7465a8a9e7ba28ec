import FeedCore
import Foundation
@testable import FeedEngine
@testable import FeedFormats
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
        #expect(lines == ["a  Airport outfit ✈️  1", "a  東京 trip          2  #x", "a  Plain title        3  #y"])
        let narrow = TextTable(width: 16, color: false).render(cards).split(separator: "\n").map(String.init)
        #expect(narrow.allSatisfy { DisplayWidth.of($0) <= 16 })
        #expect(narrow[1].hasPrefix("a  東京 trip"))
    }

    /// Every width from 40 to 160 columns: no line is wider, the marker is never cut (at
    /// narrow widths it is one letter, `[s]`, before the title drops below two fifths of
    /// the line: issue 28, defect 17), and a long LTK-style id is shortened rather than
    /// widening the table.
    @Test func everyWidthFitsAndTheMarkerSurvives() {
        var cards = [
            Card(source: "dishwashers", upstreamID: "c70ee072-b8f8-11ec-a4b0-0242ac110004", kind: .product,
                 title: "Neff S513M60X1G Integrated Dishwasher, Stainless Steel ✈️ 東京", price: Price(amount: 660, currency: "GBP"),
                 tags: ["Claim £50 cashback", "out of stock"], origin: .snapshot),
            Card(source: "a", upstreamID: "1", kind: .item, title: "Short", origin: .cache),
        ]
        cards.append(Card(source: "users", upstreamID: "2", kind: .person, title: "Janet Weaver"))
        for width in 40...160 {
            let lines = TextTable(width: width, color: false).render(cards).split(separator: "\n").map(String.init)
            #expect(lines.allSatisfy { DisplayWidth.of($0) <= width }, "width \(width)")
            #expect(lines[0].contains("[snapshot]") && lines[1].contains("[cache]")
                    || lines[0].contains("[s]") && lines[1].contains("[c]"), "width \(width)")
            if width >= 70 { #expect(lines[0].contains("[snapshot]"), "width \(width)") }
            #expect(!lines[0].contains("c70ee072-b8f8-11ec"), "width \(width)")
        }
        #expect(TextTable.shortID("c70ee072-b8f8-11ec-a4b0-0242ac110004") == "c70ee07…0004")
        let forty = TextTable(width: 40, color: false).render(cards).split(separator: "\n").map(String.init)
        #expect(forty[0] == "dis…  Neff S513M60X1G Int…  £660.00  [s]")
        #expect(forty[2] == "use…  Janet Weaver")
    }

    /// With colour on, the lines still fit: the colour codes are measured out (issue 28,
    /// defect 17: the expression that stripped them never matched, and lines of 86 to 117
    /// columns came out at 80). The visible text is the same as without colour.
    @Test func colouredLinesFitTheWidthToo() {
        let cards = [
            Card(source: "dishwashers", upstreamID: "c70ee072-b8f8-11ec-a4b0-0242ac110004", kind: .product,
                 title: "Neff S513M60X1G Integrated Dishwasher, Stainless Steel", price: Price(amount: 660, currency: "GBP"),
                 tags: ["Claim £50 cashback", "out of stock", "2 year guarantee"], origin: .snapshot),
            Card(source: "users", upstreamID: "2", kind: .person, title: "Janet Weaver", tags: ["staff"]),
        ]
        for width in [40, 80, 120] {
            let table = TextTable(width: width, color: true)
            let coloured = table.render(cards).split(separator: "\n").map(String.init)
            // Visible text: the codes out, and the padding a colour reset leaves at the end.
            let visible = coloured.map { line in
                String(line.replacing(#/\u{1B}\[[0-9;]*m/#, with: "").reversed().drop { $0 == " " }.reversed())
            }
            #expect(coloured.contains { $0.contains("\u{1B}[") })
            #expect(visible.allSatisfy { DisplayWidth.of($0) <= width }, "width \(width): \(visible)")
            #expect(visible == TextTable(width: width, color: false).render(cards).split(separator: "\n").map(String.init))
        }
    }

    /// Control characters in upstream text never reach the terminal.
    @Test func controlCharactersAreDropped() {
        #expect(TerminalText.safe("a\u{1B}]0;x\u{07}b\u{9B}2Jc\td\ne") == "a]0;xb2Jc d e")
        #expect(TerminalText.safe("Crème 東京 ✈️") == "Crème 東京 ✈️")
    }

    /// Ordered by date, each line starts with the card's date; undated cards have a blank
    /// one. At 80 columns the short id to pass to `show` and `mark` is there.
    @Test func aListByDateSaysEachCardsDate() {
        let cards = [
            Card(source: "blog", upstreamID: "tag:blog.example.org,2026:posts/incremental-builds", kind: .post, title: "Incremental builds, measured",
                 published: Date(timeIntervalSince1970: 1_795_165_200)),
            Card(source: "shop", upstreamID: "MUG", kind: .item, title: "Mug"),
        ]
        let lines = TextTable(width: 80, color: false, showsDates: true).render(cards).split(separator: "\n").map(String.init)
        #expect(lines == ["2026-11-20  blog  Incremental builds, measured  tag:blo…ilds", "            shop  Mug                           MUG"])
    }
}
