@testable import FeedConfig
import FeedCore
@testable import FeedEngine
import Testing
import Yams

/// The hand-written classifier reads every plain scalar as Yams' default resolver does.
@Suite struct YAMLPlainScalarTests {
    static func resolver(_ text: String) -> ConfigScalar.Kind {
        switch Resolver.default.resolveTag(of: Node(text)) {
        case .int: .integer
        case .float: .float
        case .bool: .boolean
        case .null: .null
        default: .text
        }
    }

    static let examples = [
        "", "~", "null", "Null", "NULL", "nul", "yes", "Off", "ON", "oN", "true", "tRue", "0", "-0", "+12", "1_000", "0x1F",
        "0x", "0o17", "0o", "017", "08", "0b101", "0b", "0b2", "1:20", "190:20:30", "12:60", "1:2:3", "1:20.5", "0:30", "0:30.5",
        "190:20:30.15", "1e10", "1.5e-3", "1.5e+", ".5E+2", ".5e2", "-.5", "0.", ".", "._", ".inf", "-.Inf", "+.INF", ".NaN",
        "+.nan", "6.8523015e+5", "685.230_15e+03", "685_230.15", "2001-12-14", "https://x.example/a", "1.0.0", "<<", "=",
        "20MiB", "64 MB", "1e3x", "--1", "+-1", "١٢", "１２",
    ]

    @Test(arguments: examples) func examplesAgreeWithYams(_ text: String) {
        #expect(YAMLPlainScalar.kind(text) == Self.resolver(text))
    }

    /// Every string of up to three characters from the ones the rules care about.
    @Test func everyShortStringAgreesWithYams() {
        let alphabet = ["0", "1", "5", "7", "9", "_", ".", ":", "-", "+", "~", "e", "E", "x", "o", "O", "b", "a", "n", "i", "f", "N", "y", "h", "é"]
        var texts = alphabet
        for a in alphabet { for b in alphabet { texts.append(a + b) } }
        for a in alphabet { for b in alphabet { for c in alphabet { texts.append(a + b + c) } } }
        var disagreements: [String] = []
        for text in texts where YAMLPlainScalar.kind(text) != Self.resolver(text) { disagreements.append(text) }
        #expect(disagreements == [])
    }
}
