import FeedEngine
import Foundation
import Testing

/// HTTP dates without DateFormatter: RFC 9110's example in each of its three forms, and
/// round trips over two centuries against the calendar Foundation computes.
@Suite struct HTTPDateTests {
    let example = Date(timeIntervalSince1970: 784_111_777)

    @Test func writesIMFFixdate() {
        #expect(HTTPDate.string(from: example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 951_782_400.9)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
    }

    @Test func readsTheThreeFormsOfRFC9110() {
        #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 GMT") == example)
        #expect(HTTPDate.date(from: "Sunday, 06-Nov-94 08:49:37 GMT") == example)
        #expect(HTTPDate.date(from: "Sun Nov  6 08:49:37 1994") == example)
        for bad in ["", "soon", "Sun, 06 Nov 1994 08:49:37 EST", "Sun, 32 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT"] {
            #expect(HTTPDate.date(from: bad) == nil, "\(bad)")
        }
    }

    @Test func roundTripsAndAgreesWithTheGregorianCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // Every 97 hours and 13 seconds from 1901 to 2100: every weekday, month and leap rule.
        for seconds in stride(from: -2_177_452_800, to: 4_102_444_800, by: 349_213) {
            let date = Date(timeIntervalSince1970: Double(seconds))
            let text = HTTPDate.string(from: date)
            #expect(HTTPDate.date(from: text) == date, "\(text)")
            let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: date)
            let weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][(parts.weekday ?? 1) - 1]
            #expect(text.hasPrefix("\(weekday), ") && text.contains(" \(parts.year ?? 0) "), "\(text) vs \(parts)")
        }
    }
}
