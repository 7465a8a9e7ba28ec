import Foundation

/// Feed dates as real feeds write them, read without ICU: RFC 822/1123 (`Tue, 10 Jun 2003
/// 04:00:00 GMT`) with named zones, missing seconds, two-digit years and day names that
/// do not match; and ISO 8601/RFC 3339 (`2003-12-13T18:30:02Z`), with or without a zone
/// (none is read as UTC). Anything else is not a date: nil, never "now". Shared by the
/// sources that read dates from the web (feeds, pages).
public enum FeedDates {
    static let zones: [String: Int] = [
        "UT": 0, "UTC": 0, "GMT": 0, "Z": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6,
        "PST": -8, "PDT": -7, "CET": 1, "CEST": 2, "BST": 1, "IST": 5, "JST": 9, "AEST": 10, "AEDT": 11,
    ]
    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].map { Array($0.utf8) }

    // Read on UTF-8 bytes: every card has a date, and splitting it into `String`s of
    // `Character`s cost more than the rest of its mapping.
    public static func date(_ text: String) -> Date? {
        let bytes = Array(HTMLText.trimmed(text).utf8)
        guard let first = bytes.first else { return nil }
        if isDigit(first), bytes.count >= 10, bytes[4] == UInt8(ascii: "-") {
            return iso8601(bytes)
        }
        return rfc822(bytes)
    }

    /// `2003-12-13T18:30:02.25+01:00`, `2003-12-13 18:30`, `2003-12-13`.
    static func iso8601(_ bytes: [UInt8]) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count, let value = digits(bytes[index ..< index + count]) else { return nil }
            index += count
            return value
        }
        func skip(_ byte: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0.0, offset = 0
        if skip("T") || skip("t") || skip(" ") {
            guard let h = number(2), skip(":"), let m = number(2) else { return nil }
            hour = h
            minute = m
            if skip(":") {
                guard let s = number(2) else { return nil }
                second = Double(s)
                if skip(".") || skip(",") {
                    var scale = 0.1
                    while index < bytes.count, isDigit(bytes[index]) {
                        second += Double(bytes[index] - 48) * scale
                        scale /= 10
                        index += 1
                    }
                }
            }
            if skip("Z") || skip("z") {
                offset = 0
            } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let h = number(2) else { return nil }
                _ = skip(":")
                let m = number(2) ?? 0
                offset = sign * (h * 3600 + m * 60)
            }
        }
        guard index == bytes.count else { return nil }
        return make(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// `Tue, 10 Jun 2003 04:00:00 GMT`, `10 Jun 03 04:00 EST`, `Wed, 2 Oct 2002 13:00:00 +0100`.
    static func rfc822(_ bytes: [UInt8]) -> Date? {
        var words = bytes.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        // A day name, right or wrong, says nothing the date does not.
        if let first = words.first, first.allSatisfy(isLetter) { words.removeFirst() }
        guard words.count >= 4, let day = digits(words[0]), words[1].count >= 3,
              let month = months.firstIndex(of: words[1].prefix(3).map(lowercased)).map({ $0 + 1 }),
              var year = digits(words[2]) else { return nil }
        if words[2].count == 2 { year += year < 50 ? 2000 : 1900 }
        let clock = words[3].split(separator: UInt8(ascii: ":")).map(digits)
        guard clock.count >= 2, clock.allSatisfy({ $0 != nil }), let hour = clock[0], let minute = clock[1] else { return nil }
        let second = clock.count > 2 ? clock[2] ?? 0 : 0
        var offset = 0
        if words.count > 4 {
            let zone = words[4]
            if let hours = zones[String(decoding: zone, as: UTF8.self).uppercased()] {
                offset = hours * 3600
            } else if let sign = zone.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), zone.count == 5,
                      let value = digits(zone.dropFirst()) {
                offset = (sign == UInt8(ascii: "-") ? -1 : 1) * ((value / 100) * 3600 + (value % 100) * 60)
            } else {
                return nil
            }
        }
        return make(year: year, month: month, day: day, hour: hour, minute: minute, second: Double(second), offset: offset)
    }

    /// The value of 1 to 9 decimal digits; nil for anything else (a sign, a space, nothing).
    static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard (1...9).contains(bytes.count) else { return nil }
        var value = 0
        for byte in bytes {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }

    static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    /// An ASCII letter, or a byte of a non-ASCII character (a day name in another language).
    static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) || byte >= 0x80 }

    static func lowercased(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte | 0x20 : byte }

    static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Double, offset: Int) -> Date? {
        guard (1000...9999).contains(year), (1...12).contains(month), (1...CivilDays.length(ofMonth: month, in: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), second < 61 else { return nil }
        let days = CivilDays.days(fromCivil: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 - offset) + second
        return Date(timeIntervalSince1970: seconds)
    }
}
