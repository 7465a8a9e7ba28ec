import FeedCore
import FeedEngine
import FeedFormats
import FeedSourceTesting
import Foundation
import SourceCatalogue
import Testing

/// The hand-written JSON Lines writer must print what `JSONEncoder` prints, byte for byte:
/// over every card the shipped sources make from their recordings, and over hostile text.
@Suite struct JSONLinesTests {
    static func encoderLine(_ card: Card) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(card), as: UTF8.self)
    }

    @Test func everyRecordedCardEncodesAsJSONEncoderWould() async throws {
        let cards = try await ShippedConfig.offlineCards()
        #expect(cards.count > 100)
        for card in cards {
            #expect(JSONLines.line(for: card) == (try Self.encoderLine(card)))
        }
    }

    @Test func hostileTextAndKeysEncodeAsJSONEncoderWould() throws {
        var card = Card(source: "s", upstreamID: "a\"b\\c/d", kind: .item,
                        title: "quote \" backslash \\ slash / tab \t nl \n cr \r bell \u{7} esc \u{1B} \u{1F} del \u{7F} ls \u{2028} é 😀",
                        summary: "", price: Price(amount: Decimal(string: "-0.50") ?? 0, currency: "EUR", display: "€ -0,50",
                                                   regular: Decimal(string: "1e3"), min: 0, max: Decimal(string: "24.990")),
                        image: URL(string: "https://x.test/a%20b?q=1&r=é"), url: URL(string: "http://x.test/"),
                        author: Card.Author(name: "Ω", image: URL(string: "https://x.test/i.png"), url: nil),
                        published: Date(timeIntervalSince1970: 1_650_295_443.25), tags: ["2 for 1", "", "\u{0}"],
                        details: ["a10": 1, "a9": 2, "B": true, "_x": .null, "é": ["nested": ["z": 1, "A": [1, "x", false]]],
                                  "": "empty key", "Z1": .number(Decimal(string: "3.14159") ?? 0)],
                        origin: .snapshot)
        #expect(JSONLines.line(for: card) == (try Self.encoderLine(card)))
        card.author = nil
        card.price = nil
        card.details = [:]
        card.tags = []
        #expect(JSONLines.line(for: card) == (try Self.encoderLine(card)))
    }

    /// Every character that needs an escape, at every place in plain and non-ASCII text of
    /// every length around the writer's eight-byte steps.
    @Test func escapesAreFoundWhereverTheyAre() throws {
        for filler in ["abcdefghijklmnopqrstuvwx", "é€😀ab✓cdéé€fgh😀ij"] {
            for special in ["\"", "\\", "\n", "\u{0}", "\u{1F}", "/", "\u{7F}", "é"] {
                for length in 0...filler.count {
                    let base = String(filler.prefix(length))
                    for offset in 0...base.count {
                        let text = String(base.prefix(offset)) + special + String(base.dropFirst(offset))
                        let card = Card(source: "s", upstreamID: "1", kind: .item, title: text)
                        #expect(JSONLines.line(for: card) == (try Self.encoderLine(card)), "\(text.debugDescription)")
                    }
                }
            }
        }
    }

    /// A dump large enough to be formatted on several cores comes out in order, line for
    /// line what one card at a time gives, and streamed in chunks.
    @Test func aLargeDumpIsFormattedInOrder() {
        let cards = (0..<5_003).map { index in
            Card(source: "s", upstreamID: "\(index)", kind: .item, title: "card \(index) \"é\"",
                 price: Price(amount: Decimal(index) / 100, currency: "EUR"))
        }
        var chunks = 0
        var streamed: [UInt8] = []
        var out = FormattedOutput(chunk: 64 * 1024) { bytes in
            chunks += 1
            streamed += bytes
        }
        JSONLinesFormat().write(FeedDocument(cards: cards), to: &out)
        out.finish()
        let expected = cards.map { JSONLines.line(for: $0) + "\n" }.joined()
        #expect(String(decoding: streamed, as: UTF8.self) == expected)
        #expect(chunks > 3)
    }
}

/// What the XML formats (Atom, RSS, OPML) write of any text.
@Suite struct XMLTextTests {
    @Test func specialCharactersBecomeEntitiesAndWhatXMLCannotHoldIsLeftOut() {
        #expect(XMLText.escape("plain text, é and 日本 €") == "plain text, é and 日本 €")
        #expect(XMLText.escape("a&b<c>\"d'e") == "a&amp;b&lt;c&gt;&quot;d&apos;e")
        #expect(XMLText.escape("tab\tline\nreturn\r bell\u{7} nul\u{0} esc\u{1B}") == "tab\tline\nreturn\r bell nul esc")
        #expect(XMLText.escape("x\u{FFFE}y\u{FFFF}z\u{FFFD}\u{FEFF}") == "xyz\u{FFFD}\u{FEFF}")
        #expect(XMLText.escape("&") == "&amp;" && XMLText.escape("") == "")
    }
}
