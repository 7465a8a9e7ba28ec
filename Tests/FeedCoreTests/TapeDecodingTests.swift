@testable import FeedCore
import FeedSupport
import JSONTape
import Foundation
import SourceCatalogue
import Testing

/// The tape decoder against Foundation's `JSONDecoder`, which it stands in for: whenever
/// the tape gives a value, Foundation must give the same one (the skip messages of a
/// lenient list included); everything else goes to Foundation anyway (``JSONBody``).
@Suite struct TapeDecodingTests {
    /// Every recorded upstream body, as any JSON and as a model with lenient lists.
    @Test func everyRecordedBodyDecodesByTheTapeAsFoundationDecodesIt() throws {
        let bodies = SourceCatalogue.sources.flatMap { $0.snapshots }.map(\.body)
            .filter { (try? JSONDecoder().decode(JSONValue.self, from: $0)) != nil }
        #expect(bodies.count >= 10)
        for body in bodies {
            guard case .decoded(let value) = TapeDecoding.decode(JSONValue.self, from: body) else {
                Issue.record("the tape left a recorded body to Foundation (\(body.count) bytes)")
                continue
            }
            #expect(value == (try JSONDecoder().decode(JSONValue.self, from: body)))
        }
    }

    /// Exact values and the `DecodingError` cases and paths lenient lists report.
    @Test func valuesAndSkipReasonsMatchFoundation() throws {
        let body = Data(#"""
        {"items": [
          {"id": "a", "n": 3, "price": {"now": "12.50"}, "tags": ["x", "y\u00e9\n"], "link": "https://e.example/a?b=1"},
          {"id": 7, "price": {"now": "1"}},
          {"id": "c", "price": null},
          {"id": "d", "n": "3", "price": {"now": "1"}},
          {"id": "e", "price": {"now": {"from": "1.00", "to": "2.00"}}, "rating": 4.75, "extra": {"deep": [[{}]]}},
          {"id": "f", "price": {"now": "cheap"}},
          {"id": "g", "price": {"now": "2"}, "tags": ["ok", 5]},
          {"price": {"now": "2"}},
          {"id": "h", "id": "duplicate", "price": {"now": "\ud83d\ude00"}},
          [1, 2],
          {"id": "i", "n": -0, "price": {"now": "3"}, "rating": -0.000, "flags": {"a": true, "b": null, "a": false}}
        ], "total": 11}
        """#.utf8)
        let tape = try #require(decodedByTape(Page.self, body))
        #expect(tape == (try JSONDecoder().decode(Page.self, from: body)))
        #expect(tape.items.elements.map(\.id) == ["a", "c", "i"])
        #expect(tape.items.skipped.map(\.description) == [
            "skipped items[1]: id is a number, expected text",
            "skipped items[3]: n is text, expected a number",
            "skipped items[4]: price.now is an object, expected a number",
            "skipped items[5]: price.now not an amount: \"cheap\"",
            "skipped items[6]: tags[1] is a number, expected text",
            "skipped items[7]: id is missing",
            "skipped items[8]: price.now not an amount: \"😀\"",
            "skipped items[9]: the record is a list, expected an object",
        ])
    }

    /// Thousands of damaged bodies: values of the wrong type, removed and repeated keys,
    /// odd numbers and escapes, broken bytes. The tape must never give a value Foundation
    /// would not; and it must decode most of the well-formed ones itself.
    @Test func damagedBodiesNeverDecodeDifferentlyFromFoundation() throws {
        var random = SplitMix(seed: 14)
        let base = try JSONDecoder().decode(JSONValue.self, from: Data(Self.sample.utf8))
        var decodedByTape = 0
        var decodedByFoundation = 0
        for round in 0..<3000 {
            let body: Data
            if round % 3 == 0 {
                body = Self.damageBytes(Data(Self.sample.utf8), &random)
            } else {
                body = try Self.encoder.encode(Self.damageTree(base, &random))
            }
            let foundation = try? JSONDecoder().decode(Page.self, from: body)
            if foundation != nil { decodedByFoundation += 1 }
            switch TapeDecoding.decode(Page.self, from: body) {
            case .decoded(let value):
                decodedByTape += 1
                #expect(value == foundation, "\(String(decoding: body, as: UTF8.self))")
            case .failed:
                #expect(foundation == nil, "\(String(decoding: body, as: UTF8.self))")
            case .irregular:
                break
            }
            if case .decoded(let value) = TapeDecoding.decode(JSONValue.self, from: body) {
                #expect(value == (try? JSONDecoder().decode(JSONValue.self, from: body)))
            }
        }
        #expect(decodedByFoundation > 800)
        #expect(decodedByTape > decodedByFoundation * 8 / 10)
    }

    /// Tape entries carry no lengths: a name is matched in place and a value measured when
    /// read. Names that share a prefix, escaped names, names with quotes, the empty name,
    /// names longer than what is left of the body, and values at the very end.
    @Test func namesAndValuesAreMeasuredWhereTheyAre() throws {
        let body = Data(#"{"i":1,"idx":2,"i\u0064":"escaped","a\"b":"quoted","":"empty","id":"plain","n":-0.5e3,"x\\":"tail"}"#.utf8)
        let tape = try #require(decodedByTape(Names.self, body))
        #expect(tape == (try JSONDecoder().decode(Names.self, from: body)))
        #expect(tape == Names(i: 1, idx: 2, id: "escaped", quoted: "quoted", empty: "empty", n: -500, backslash: "tail", long: nil))
        for (text, value) in [("12", 12), ("-7", -7), ("0", 0)] {
            #expect(decodedByTape(Int.self, Data(text.utf8)) == value)
        }
        #expect(decodedByTape(String.self, Data(#""a\"b""#.utf8)) == "a\"b")
        #expect(decodedByTape(Double.self, Data("2.5e-1".utf8)) == 0.25)
        #expect(decodedByTape([String: String].self, Data(#"{"k":"v\\"}"#.utf8)) == ["k": "v\\"])
    }

    struct Names: Decodable, Equatable {
        var i: Int
        var idx: Int
        var id: String
        var quoted: String
        var empty: String
        var n: Double
        var backslash: String
        var long: String?

        enum CodingKeys: String, CodingKey {
            case i, idx, id, quoted = "a\"b", empty = "", n, backslash = "x\\", long = "a-name-longer-than-the-rest-of-the-body-after-it"
        }
    }

    @Test func documentsTheTapeDoesNotHandleGoToFoundation() {
        for text in ["", " ", "{", #"{"a":1,}"#, "[01]", #"{"a":"\x"}"#, "\u{FEFF}{}", #"{"s":"\ud800"}"#,
                     String(repeating: "[", count: 600) + String(repeating: "]", count: 600)] {
            if case .decoded = TapeDecoding.decode(JSONValue.self, from: Data(text.utf8)) {
                Issue.record("the tape decoded \(text.prefix(40))")
            }
        }
        // Integers Foundation rounds or rejects, decimals longer than the tape reads exactly.
        for text in [#"{"n":1.5}"#, #"{"n":1e2}"#, #"{"n":99999999999999999999}"#] {
            if case .decoded = TapeDecoding.decode([String: Int].self, from: Data(text.utf8)) { Issue.record("the tape decoded \(text)") }
        }
        let long = #"{"n":0.1234567890123456789012345678901234}"#
        if case .decoded = TapeDecoding.decode([String: Decimal].self, from: Data(long.utf8)) { Issue.record("the tape decoded \(long)") }
        var invalid = Data(#"{"id":""#.utf8)
        invalid.append(contentsOf: [0xC3, 0x28])
        invalid.append(contentsOf: Data(#""}"#.utf8))
        if case .decoded = TapeDecoding.decode(JSONValue.self, from: invalid) { Issue.record("the tape decoded invalid UTF-8") }
    }

    // MARK: Models shaped like the sources' wire models

    struct Page: Decodable, Equatable {
        var items: LenientList<Item>
        var total: Int?
    }

    struct Item: Decodable, Equatable {
        var id: String
        var n: Int?
        var price: Price?
        var tags: [String]?
        var link: URL?
        var rating: Decimal?
        var flags: [String: JSONValue]?
        var extra: JSONValue?
    }

    /// `now` is text or a number (``LenientDecimal``: a `try?` inside, and its own
    /// `dataCorrupted` error for text that is not an amount).
    struct Price: Decodable, Equatable {
        var now: LenientDecimal
    }

    private func decodedByTape<T: Decodable>(_ type: T.Type, _ body: Data) -> T? {
        if case .decoded(let value) = TapeDecoding.decode(type, from: body) { return value }
        return nil
    }

    // MARK: Damage

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let sample = #"""
    {"items": [
      {"id": "a", "n": 3, "price": {"now": "12.50"}, "tags": ["x", "y"], "link": "https://e.example/a", "rating": 4.5},
      {"id": "b", "price": {"now": {"from": "1.00", "to": "2.00"}}, "flags": {"new": true}, "extra": [1, "two", null]},
      {"id": "c\u00e9", "n": 12, "price": {"now": "7"}, "tags": [], "rating": 3, "extra": {"k": {"k": [0.5]}}}
    ], "total": 3}
    """#

    static let replacements: [JSONValue] = [
        .null, .bool(true), .number(1), .number(Decimal(string: "1.5")!), .number(-0), .number(Decimal(string: "1e30")!),
        .string(""), .string("12.5"), .string("https://x.example/é"), .string("a\"b\\c\u{0}"), .array([]), .object([:]),
        .object(["now": "3"]), .array([.string("x")]),
    ]

    /// One node of the tree replaced, removed or repeated.
    static func damageTree(_ value: JSONValue, _ random: inout SplitMix) -> JSONValue {
        switch value {
        case .object(var members) where !members.isEmpty && random.next(4) != 0:
            let key = members.keys.sorted()[random.next(members.count)]
            switch random.next(5) {
            case 0: members[key] = nil
            case 1: members[key] = replacements[random.next(replacements.count)]
            default: members[key] = damageTree(members[key] ?? .null, &random)
            }
            return .object(members)
        case .array(var items) where !items.isEmpty && random.next(4) != 0:
            let index = random.next(items.count)
            switch random.next(5) {
            case 0: items.remove(at: index)
            case 1: items[index] = replacements[random.next(replacements.count)]
            default: items[index] = damageTree(items[index], &random)
            }
            return .array(items)
        default:
            return replacements[random.next(replacements.count)]
        }
    }

    static let insertions: [[UInt8]] = [
        Array(#"""#.utf8), Array(#"\"#.utf8), Array(#"\u00e9"#.utf8), Array(#"\ud800"#.utf8), Array("1.5".utf8),
        Array("1e999".utf8), Array("null".utf8), Array("{}".utf8), Array("[]".utf8), Array(",".utf8), [0xFF], [0xC3],
        Array("-0".utf8), Array(#"\u0000"#.utf8), Array(#""id":"z","#.utf8), Array(" \n\t".utf8), Array("0.10".utf8),
    ]

    /// A few bytes removed or inserted.
    static func damageBytes(_ body: Data, _ random: inout SplitMix) -> Data {
        var bytes = Array(body)
        for _ in 0...random.next(2) {
            let at = random.next(bytes.count)
            if random.next(2) == 0 {
                bytes.remove(at: at)
            } else {
                bytes.insert(contentsOf: insertions[random.next(insertions.count)], at: at)
            }
        }
        return Data(bytes)
    }

    /// A list read up to a limit (issue 28, defect 12): the first records, the rest of the
    /// body whole (nested lists included), the same as Foundation's decode cut after.
    @Test func aListIsBuiltOnlyUpToItsLimit() throws {
        let records = (0..<1000).map { #"{"id":\#($0),"tags":["a","b","c"]}"# }.joined(separator: ",")
        let body = Data(#"{"data":{"items":[\#(records)],"total":1000},"tags":[1,2,3]}"#.utf8)
        let tape = try #require(TapeDecoding.tree(JSONValue.self, from: body, keepingAtMost: 2, ofArrayAt: ["data", "items"]))
        #expect(tape == JSONValue.object([
            "data": ["items": [["id": 0, "tags": ["a", "b", "c"]], ["id": 1, "tags": ["a", "b", "c"]]], "total": 1000],
            "tags": [1, 2, 3],
        ]))
        let whole = try JSONDecoder().decode(JSONValue.self, from: body)
        #expect(whole.keepingAtMost(2, ofListAt: ["data", "items"]) == tape)
        #expect(try JSONBody.tape.value(from: body, keepingAtMost: 2, ofListAt: ["data", "items"]) == tape)
        // A path that leads to no list cuts nothing.
        #expect(TapeDecoding.tree(JSONValue.self, from: body, keepingAtMost: 2, ofArrayAt: ["nothing"]) == whole)
    }
}

/// A small seeded generator, so every run damages the same way.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(bound, 1)))
    }
}
