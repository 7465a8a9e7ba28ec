import FeedCore
import Foundation
import Testing

/// `JSONValue` read by Foundation's `JSONDecoder`, which has no way to ask a value's kind:
/// each kind is tried in turn, and what fails inside a value is reported where it is.
@Suite struct JSONValueDecodingTests {
    @Test func everyKindIsReadAsItIs() throws {
        let text = #"{"s":"x","q":"12","n":1.50,"t":true,"f":false,"z":null,"a":[null,"true",-0],"o":{"e":{}}}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value == .object([
            "s": .string("x"), "q": .string("12"), "n": .number(Decimal(string: "1.5")!), "t": .bool(true), "f": .bool(false),
            "z": .null, "a": .array([.null, .string("true"), .number(0)]), "o": .object(["e": .object([:])]),
        ]))
    }

    /// A value of no kind deep inside (a number out of range) fails the whole, at its place.
    @Test func aFailureInsideAnObjectOrAListNamesItsPlace() throws {
        for (text, place) in [(#"{"o":{"big":1e400}}"#, ["o", "big"]), (#"[1,[2,1e400]]"#, ["Index 1", "Index 1"])] {
            #expect {
                _ = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            } throws: { error in
                guard case DecodingError.typeMismatch(_, let context) = error else { return false }
                return context.codingPath.map(\.stringValue) == place
            }
        }
    }
}
