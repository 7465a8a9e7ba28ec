@testable import FeedServer
@testable import ServeAccess
@testable import ServeHTTP
import Testing

/// Forms and queries as browsers send them: `+` for spaces, `%XX` for bytes, empty pairs,
/// broken escapes and bytes that are not UTF-8.
struct FormDecodingTests {
    @Test func pairsAreDecodedAsBrowsersEncodeThem() {
        let pairs = Form.pairs("a=1&b=x+y%2Bz&&c&d=%E2%9C%93&e=%zz&%ff=1&f=%C3&g=%4&ids=f1%3Ahttps%3A%2F%2Fx.example%2F1&ids=a=b")
        #expect(pairs.map { "\($0.0)|\($0.1)" } == ["a|1", "b|x y+z", "c|", "d|✓", "e|", "f|", "g|", "ids|f1:https://x.example/1", "ids|a=b"])
        #expect(Form.pairs("").isEmpty)
    }
}
