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
        let (year, month, dayOfMonth) = civil(fromDays: days)
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
        let days = days(fromCivil: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]))
    }

    /// Days since 1970-01-01 of a date in the proleptic Gregorian calendar (H. Hinnant's
    /// `days_from_civil`).
    static func days(fromCivil year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
