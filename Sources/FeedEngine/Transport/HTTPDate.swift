import FeedCore
import FeedSupport
import Foundation

/// HTTP dates (RFC 9110 §5.6.7): written as IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`;
/// read in that form and the two obsolete ones a recipient must accept (RFC 850,
/// `Sunday, 06-Nov-94 08:49:37 GMT`, and asctime, `Sun Nov  6 08:49:37 1994`). Plain
/// arithmetic on the proleptic Gregorian calendar in UTC: no `DateFormatter`, which
/// loads ICU's locale data, and no lock.
public enum HTTPDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` as IMF-fixdate, to the second (rounded down).
    public static func string(from date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (day, time) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let days = time < 0 ? day - 1 : day
        let secondOfDay = time < 0 ? time + 86_400 : time
        let (year, month, dayOfMonth) = CivilDays.civil(fromDays: days)
        let weekday = Self.days[((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(dayOfMonth)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// The date in `text`, in any of the three forms; nil for anything else.
    public static func date(from text: String) -> Date? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let parts: (day: String, month: String, year: String, time: String)
        switch words.count {
        case 6 where words[5] == "GMT":
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            parts = (words[1], words[2], words[3], words[4])
        case 4 where words[3] == "GMT":
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let date = words[1].split(separator: "-").map(String.init)
            guard date.count == 3, let short = Int(date[2]), date[2].count == 2 else { return nil }
            // Two-digit years: the nearest century that is not more than 50 years ahead.
            parts = (date[0], date[1], String(short < 70 ? 2000 + short : 1900 + short), words[2])
        case 5:
            // asctime: Sun Nov  6 08:49:37 1994
            parts = (words[2], words[1], words[4], words[3])
        default:
            return nil
        }
        let clock = parts.time.split(separator: ":").compactMap { Int($0) }
        guard let day = Int(parts.day), let month = months.firstIndex(of: parts.month), let year = Int(parts.year),
              parts.year.count == 4, clock.count == 3, (1...31).contains(day),
              (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        let days = CivilDays.days(fromCivil: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]))
    }
}
