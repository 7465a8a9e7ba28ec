@testable import FeedCore
@testable import FeedSupport
import Foundation
import Testing

@Suite struct MoneyTests {
    @Test func minorUnitsAreExact() {
        #expect("\(Money.fromMinorUnits(22999))" == "229.99")
        #expect("\(Money.fromMinorUnits(5))" == "0.05")
        #expect("\(Money.fromMinorUnits(-150))" == "-1.5")
    }

    @Test func parsingAcceptsOnlyPlainDecimals() {
        #expect(Money.parse("660.00") == Decimal(660))
        #expect("\(Money.parse("239.99")!)" == "239.99")
        #expect(Money.parse("£660") == nil)
        #expect(Money.parse("") == nil)
        #expect(Money.parse("1e3") == nil)
        #expect("\(Money.parse(" -0.50 ")!)" == "-0.5")
        #expect("\(Money.parse(".5")!)" == "0.5")
        // Foundation alone reads these as 1.2, 0 and 1: a price must be the whole text.
        for partial in ["1.2.3", "-", ".", "1-2", "--1", "1 2"] {
            #expect(Money.parse(partial) == nil, "\(partial)")
        }
    }

    /// The card store and the digest state read back what `Decimal` wrote, exactly.
    @Test func plainTextReadsBackEveryDescription() throws {
        for text in ["0", "-1.5", "229.99", "0.000000000000000000000000000001", "12345678901234567890123456789012345678"] {
            let value = try #require(Decimal(plainText: text))
            #expect(value.description == text)
        }
    }

    @Test func formattingUsesTwoDigitsAndTheSymbol() {
        #expect(Money.format(Decimal(string: "7.5")!, currency: "EUR") == "€7.50")
        #expect(Money.format(19, currency: "EUR") == "€19.00")
        #expect(Money.format(Decimal(string: "229.99")!, currency: "USD") == "$229.99")
        #expect(Money.format(Decimal(string: "0.125")!, currency: "GBP") == "£0.13")
        #expect(Money.format(5, currency: "CHF") == "CHF 5.00")
        #expect(Money.format(5, currency: nil) == "5.00")
        #expect(Money.format(-2, currency: "EUR") == "-€2.00")
    }

    @Test func symbolsMapToISOCodes() {
        #expect(Money.currencyCode(forSymbol: "$") == "USD")
        #expect(Money.currencyCode(forSymbol: " £") == "GBP")
        #expect(Money.currencyCode(forSymbol: "₿") == nil)
    }

    @Test func percentOffIsWhole() {
        #expect(Money.percentOff(regular: Decimal(string: "229.99")!, now: Decimal(string: "199.99")!) == 13)
        #expect(Money.percentOff(regular: 10, now: 10) == nil)
    }

    /// The integer form agrees with the exact decimal one, halves included (12.5% → 13).
    @Test func percentOffInMinorUnitsAgreesWithDecimals() {
        #expect(Money.percentOff(regularMinor: 800, nowMinor: 700) == 13)
        #expect(Money.percentOff(regularMinor: 20000, nowMinor: 19900) == 1)
        #expect(Money.percentOff(regularMinor: 100, nowMinor: 100) == nil)
        #expect(Money.percentOff(regularMinor: 0, nowMinor: -5) == nil)
        #expect(Money.percentOff(regularMinor: .max, nowMinor: 1) == 100)
        for regular in [1, 3, 7, 99, 200, 999, 22999, 100_001] {
            for now in [-50, 0, 1, regular / 3, regular / 2, regular - 1, regular] {
                #expect(Money.percentOff(regularMinor: regular, nowMinor: now)
                        == Money.percentOff(regular: Money.fromMinorUnits(regular), now: Money.fromMinorUnits(now)),
                        "\(regular) \(now)")
            }
        }
    }
}

@Suite struct CardEncodingTests {
    @Test func jsonHasSortedKeysExactDecimalsAndUTCDates() throws {
        let card = Card(
            source: "shop", upstreamID: "1", kind: .deal, title: "Crème \"brûlée\"", summary: "a/b",
            price: Price(amount: Decimal(string: "24.99")!, currency: "EUR", regular: Decimal(string: "30.1")!),
            image: URL(string: "https://img.test/a/1.jpg"), published: Date(timeIntervalSince1970: 1_650_295_443),
            tags: ["sale"], details: ["percent_off": 17, "specs": ["w": "60 cm"]], origin: .snapshot)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(card), as: UTF8.self)
        #expect(json == #"{"details":{"percent_off":17,"specs":{"w":"60 cm"}},"id":"shop:1","image":"https://img.test/a/1.jpg","kind":"deal","origin":"snapshot","price":{"amount":24.99,"currency":"EUR","regular":30.1},"published":"2022-04-18T15:24:03Z","source":"shop","summary":"a/b","tags":["sale"],"title":"Crème \"brûlée\"","v":1}"#)
        #expect(try JSONDecoder().decode(Card.self, from: Data(json.utf8)) == card)
    }

    @Test func rfc3339ParsesOffsetsIntoUTC() {
        #expect(RFC3339.date(from: "2022-04-18T17:24:03+02:00") == Date(timeIntervalSince1970: 1_650_295_443))
        #expect(RFC3339.date(from: "2022-04-18T15:24:03.250Z") == Date(timeIntervalSince1970: 1_650_295_443.25))
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_650_295_443.25)) == "2022-04-18T15:24:03.250Z")
        #expect(RFC3339.date(from: "yesterday") == nil)
    }

    /// Whole seconds are written without the format style: they must read as it writes
    /// them, in every year from 1 to 9999 (before 1583 it counts in the Julian calendar),
    /// across leap days and centuries, before 1970 too.
    @Test func rfc3339WritesWholeSecondsAsTheFormatStyleDoes() {
        let style = Date.ISO8601FormatStyle(timeZone: .gmt)
        var seconds: [Int64] = [
            0, -1, 86_399, 86_400, -86_400, -86_401, 951_782_400, 951_868_799, 4_107_542_400, -2_203_891_200,
            -62_135_596_800, 253_402_300_799, 1_650_295_443, 946_684_799, 978_307_200, -11_644_473_600,
            -12_212_553_600, -12_212_553_601, -12_219_292_800, -12_219_292_801,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0 ..< 2000 { seconds.append(Int64.random(in: -62_135_596_800 ..< 253_402_300_800, using: &generator)) }
        for count in seconds {
            let date = Date(timeIntervalSince1970: TimeInterval(count))
            #expect(RFC3339.string(from: date) == style.format(date), "\(count)")
        }
    }

    /// The form cards are written in is read without the format style, and reads as the
    /// style reads it: random dates from 1583 to 9999 with no fraction, or one to three
    /// digits of it, in UTC or an offset. Near misses (a 31st of April, hour 24, second
    /// 60, four fraction digits, no zone) are left to the style, which still decides them.
    @Test func rfc3339ReadsTheCommonFormAsTheFormatStyleDoes() throws {
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let whole = Date.ISO8601FormatStyle()
        func styleDate(_ text: String) -> Date? { (try? fractional.parse(text)) ?? (try? whole.parse(text)) }
        var generator = SystemRandomNumberGenerator()
        func pad(_ value: Int, _ width: Int) -> String { String(String(value + 10_000).suffix(width)) }
        var texts = ["1583-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2000-02-29T12:00:00+14:00", "1970-01-01T00:00:00-00:30",
                     "2022-04-18T15:24:03.1Z", "2022-04-18T15:24:03.12-05:45"]
        for _ in 0 ..< 3000 {
            let year = Int.random(in: 1583...9999, using: &generator), month = Int.random(in: 1...12, using: &generator)
            let day = Int.random(in: 1...CivilDays.length(ofMonth: month, in: year), using: &generator)
            var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int.random(in: 0...23, using: &generator), 2)):"
                + "\(pad(Int.random(in: 0...59, using: &generator), 2)):\(pad(Int.random(in: 0...59, using: &generator), 2))"
            let digits = Int.random(in: 0...3, using: &generator)
            if digits > 0 { text += "." + pad(Int.random(in: 0 ..< 1000, using: &generator), digits) }
            text += Bool.random(using: &generator) ? "Z"
                : (Bool.random(using: &generator) ? "+" : "-") + pad(Int.random(in: 0...14, using: &generator), 2) + ":" + ["00", "30", "45"].randomElement(using: &generator)!
            texts.append(text)
        }
        for text in texts {
            let date = try #require(RFC3339.commonDate(text), "\(text)")
            #expect(date == styleDate(text), "\(text)")
            #expect(RFC3339.date(from: text) == date)
        }
        for nearMiss in ["2022-04-31T00:00:00Z", "2022-02-29T00:00:00Z", "2022-04-18T24:00:00Z", "2022-04-18T15:60:00Z",
                         "2022-04-18T15:24:60Z", "2022-04-18T15:24:03.1234Z", "2022-04-18T15:24:03", "2022-04-18 15:24:03Z",
                         "2022-04-18T15:24:03z", "1582-12-31T00:00:00Z", "2022-04-18T15:24:03+0200", "2022-04-18T15:24:03.Z",
                         "+022-04-18T15:24:03Z", "2022-04-18T15:24:03+24:00"] {
            #expect(RFC3339.commonDate(nearMiss) == nil, "\(nearMiss)")
            #expect(RFC3339.date(from: nearMiss) == styleDate(nearMiss), "\(nearMiss)")
        }
    }

    /// Milliseconds are rounded, not cut: `.123` read into a Double is 0.12299…, which a
    /// cut wrote as `.122`. Every millisecond of one second, and dates before 1970.
    @Test func rfc3339KeepsEveryMillisecond() {
        for millisecond in 1 ..< 1000 {
            let text = "2022-04-18T15:24:03." + String(millisecond + 1000).dropFirst() + "Z"
            let date = Date(timeIntervalSince1970: 1_650_295_443 + Double(millisecond) / 1000)
            #expect(RFC3339.string(from: date) == text)
        }
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_650_295_443.123)) == "2022-04-18T15:24:03.123Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_650_295_443.9996)) == "2022-04-18T15:24:04Z")
    }

    /// Names made from hashes (cache keys, kept files) are two lowercase digits a byte.
    @Test func hexIsTwoLowercaseDigitsAByte() {
        #expect(Hex.lowercase([0x00, 0x0f, 0xa5, 0xff, 0x10]) == "000fa5ff10")
        #expect(Hex.lowercase([UInt8]()) == "")
    }

    /// libxml2's codes said in words: never "XML error 89" for an entity loop.
    @Test func xmlErrorsAreWords() {
        #expect(PlainWords.xmlError(code: 89) == "entities that expand into each other without end")
        #expect(PlainWords.xmlError(code: 1) == "the parser gave up on it (a text in it may be over 10,000,000 bytes)")
        #expect(PlainWords.xmlError(code: 76) == "an end tag that does not match its start tag, or a missing one")
    }

    @Test func redactionHidesSecretsOnly() {
        let url = URL(string: "https://user:pw@api.test/x?page=2&api_key=abc&token=t")!
        #expect(url.redactedString == "https://user:REDACTED@api.test/x?page=2&api_key=REDACTED&token=REDACTED")
        #expect(URL(string: "https://api.test/x?page=2")!.redactedString == "https://api.test/x?page=2")
    }

    /// The user-info scan finds what the regular expression it replaced found, on text
    /// that is and is not a URL (config errors quote what was written).
    @Test func userInfoIsFoundWhereTheRegularExpressionFoundIt() {
        let pattern = #"(?<=://)[^/@\s]*:[^/@\s]*(?=@)"#
        let texts = [
            "https://u:p@h/x", "https://u@h/x", "https://:p@h", "https://u:@h", "https://u:p:q@h", "https://h/a:b@c",
            "https://h/x?next=https://a:b@c/d", "ftp://a b:c@d", "x://a:b\u{2003}c@d", "x://a:b\u{0B}c@d",
            "x://a:b\u{85}c@d", "x://a:b\r\nc@d", "x://é:ü@h", "x://a:b@c:d@e", "no scheme a:b@c", "://:@",
            "x:/a:b@c", "x:///a:b@c", "a://b://c:d@e", "a://b@c://d:e@f", "",
        ]
        for text in texts {
            let expected = text.range(of: pattern, options: .regularExpression).map { String(text[$0]) }
            #expect(Redaction.userInfoRange(in: text).map { String(text[$0]) } == expected, "\(text.debugDescription)")
        }
    }
}

@Suite struct LenientDecodingTests {
    struct Item: Decodable { var code: String; var name: String; var price: Decimal }
    struct Body: Decodable { var products: LenientList<Item> }

    @Test func badRecordsAreSkippedWithTheirPathAndWhatWasThere() throws {
        let body = Data(#"{"products":[{"code":"A","name":7,"price":1},{"code":"B","name":"ok","price":2.5},{"name":"x","price":1},{"code":"C","name":null,"price":1},{"code":"D","name":"d","price":"9"},"junk"]}"#.utf8)
        let decoded = try JSONBody.tape.decode(Body.self, from: body)
        #expect(decoded.products.elements.map(\.code) == ["B"])
        #expect(decoded.products.skipped.map(\.description) == [
            "skipped products[0]: name is a number, expected text",
            "skipped products[2]: code is missing",
            "skipped products[3]: name is null, expected text",
            "skipped products[4]: price is text, expected a number",
            "skipped products[5]: the record is text, expected an object",
        ])
    }

    @Test func aBodyThatIsNotJSONFailsWithPlainWords() {
        #expect(throws: SourceError.undecodable(path: "", reason: "the body is not JSON (9 bytes)")) {
            try JSONBody.tape.decode(Body.self, from: Data("<html>..".utf8) + Data([0xFF]))
        }
        #expect(throws: SourceError.undecodable(path: "products", reason: "is text, expected a list")) {
            try JSONBody.tape.decode(Body.self, from: Data(#"{"products":"none"}"#.utf8))
        }
    }
}
