import FeedCore
import FixtureKit
import Foundation

/// `--feeds N`: N made-up feeds on `/feeds/<n>.xml` for the feed benchmark, Atom and RSS
/// 2.0 by turns, 50 entries each (or `entries`) with the parts real feeds have (HTML summaries with
/// entities, categories, an image, RFC 822 or RFC 3339 dates): about 64 KB a feed. The
/// same `n` always gives the same bytes.
///
/// `vocabulary` > 0 (`--feed-words N`) writes shorter texts of N made-up words instead,
/// drawn as words occur in language (Zipf's law: the r-th commonest about 1/r as often),
/// so a search for two words finds a few cards or many, as it does in a reader's store;
/// with the default 28 words every entry holds every word.
///
/// The documents are made once, at start, and then served as stored bytes, the way a
/// web server serves static files: making them on every request cost the fixture server
/// as much CPU as the client under test spent parsing them, on the same two cores.
public struct FeedFarm: FixtureUpstream {
    public let name = "feeds"
    public var count: Int { documents.count }
    public static let entriesPerFeed = 50
    private let documents: [Data]
    private let entries: Int

    public init(count: Int, entries: Int = entriesPerFeed, vocabulary: Int = 0) {
        let text = Text(vocabulary: vocabulary)
        documents = (0..<count).map { Data(Self.feed($0, entries: entries, text: text).utf8) }
        self.entries = entries
    }

    /// The words of the entries: the 28 of ``words`` in turn, or a made-up vocabulary.
    struct Text {
        let vocabulary: Int
        /// The made-up words by rank, spelled once.
        let spelled: [String]

        init(vocabulary: Int) {
            self.vocabulary = vocabulary
            spelled = (0..<vocabulary).map(FeedFarm.word)
        }

        func title(_ number: Int, _ index: Int) -> String {
            vocabulary == 0 ? sentence(number + index, words: 7) : drawn(seed: number &* 100_003 &+ index, count: 7)
        }

        func summary(_ number: Int, _ index: Int) -> String {
            vocabulary == 0 ? "\(sentence(number * 7 + index, words: 90)) &amp;mdash; \(sentence(index, words: 40))."
                : drawn(seed: (number &* 100_003 &+ index) &* 7 &+ 1, count: 40) + "."
        }

        func category(_ index: Int) -> String {
            vocabulary == 0 ? String(words[index % words.count]) : spelled[index % 50]
        }

        /// `count` words, each of rank ⌊N^u⌋ - 1 for u uniform in [0, 1): rank r about 1/r as often.
        func drawn(seed: Int, count: Int) -> String {
            var state = UInt64(truncatingIfNeeded: seed) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let uniform = Double(state >> 11) / Double(1 << 53)
                return spelled[min(vocabulary - 1, Int(pow(Double(vocabulary), uniform)) - 1)]
            }.joined(separator: " ")
        }
    }

    /// The made-up word of rank `rank`: two or three syllables, different for every rank
    /// below 343,000 (Benchmarks/store.sh spells them the same way).
    static func word(_ rank: Int) -> String {
        let consonants = Array("bdfgklmnprstvz"), vowels = Array("aeiou")
        func syllable(_ n: Int) -> String { String([consonants[n % 70 / 5], vowels[n % 5]]) }
        return syllable(rank % 70) + syllable(rank / 70 % 70) + (rank >= 4900 ? syllable(rank / 4900) : "")
    }

    /// Each document with an `ETag`, answered 304 when the request names it, as a web
    /// server serves a static file (the same `n` and entry count are the same bytes).
    public func respond(to request: FixtureRequest) -> FixtureResponse? {
        guard request.path.hasPrefix("/"), request.path.hasSuffix(".xml"),
              let number = Int(request.path.dropFirst().dropLast(4)), documents.indices.contains(number) else { return nil }
        let etag = "\"feed-\(number)-\(entries)\""
        if request.headers["if-none-match"] == etag {
            return FixtureResponse(status: 304, contentType: "application/xml", body: Data(), headers: ["ETag": etag])
        }
        return FixtureResponse(status: 200, contentType: "application/xml", body: documents[number], headers: ["ETag": etag])
    }

    static let words = """
        harbour council storm ferry library market bakery press orbit compiler release patch tunnel bridge garden \
        festival concert budget school transit museum river station archive season recipe review interview
        """.split(separator: " ")

    static func sentence(_ seed: Int, words count: Int) -> String {
        (0..<count).map { String(words[(seed &* 31 &+ $0 &* 17) % words.count]) }.joined(separator: " ")
    }

    static func feed(_ number: Int, entries: Int = entriesPerFeed, text: Text = Text(vocabulary: 0)) -> String {
        number % 2 == 0 ? atom(number, entries: entries, text: text) : rss(number, entries: entries, text: text)
    }

    /// Entry `index` of feed `number`: a minute-spaced date going back from 2026-11-01.
    static func seconds(_ number: Int, _ index: Int) -> Int {
        1_793_491_200 - (index * 500 + number) * 60
    }

    static func rss(_ number: Int, entries: Int = entriesPerFeed, text: Text = Text(vocabulary: 0)) -> String {
        var out = #"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>"#
        out += "<title>Feed \(number)</title><link>https://site\(number).example.org/</link><description>Feed number \(number)</description>\n"
        for index in 0..<entries {
            let date = Date(timeIntervalSince1970: Double(seconds(number, index)))
            out += "<item><title>\(text.title(number, index).capitalized) &amp; more</title>"
            out += "<link>https://site\(number).example.org/posts/\(index)</link><guid>https://site\(number).example.org/posts/\(index)</guid>"
            out += "<pubDate>\(rfc822(date))</pubDate><category>\(text.category(index))</category>"
            out += #"<media:thumbnail url="https://img.example.org/\#(number)/\#(index).jpg"/>"#
            out += "<description>&lt;p&gt;\(text.summary(number, index))&lt;/p&gt;</description></item>\n"
        }
        return out + "</channel></rss>\n"
    }

    static func atom(_ number: Int, entries: Int = entriesPerFeed, text: Text = Text(vocabulary: 0)) -> String {
        var out = #"<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">"#
        out += "<title>Feed \(number)</title><id>urn:feed:\(number)</id><updated>2026-11-01T00:00:00Z</updated>"
        out += "<author><name>Writer \(number)</name></author>\n"
        for index in 0..<entries {
            let date = Date(timeIntervalSince1970: Double(seconds(number, index)))
            out += "<entry><title type=\"html\">\(text.title(number, index).capitalized) &amp;amp; more</title>"
            out += #"<link rel="alternate" type="text/html" href="https://site\#(number).example.org/posts/\#(index)"/>"#
            out += "<id>urn:feed:\(number):\(index)</id><published>\(rfc3339(date))</published><updated>\(rfc3339(date))</updated>"
            out += #"<category term="\#(text.category(index))"/>"#
            out += "<summary type=\"html\">&lt;p&gt;\(text.summary(number, index))&lt;/p&gt;</summary></entry>\n"
        }
        return out + "</feed>\n"
    }

    static func rfc3339(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    static func rfc822(_ date: Date) -> String {
        let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = Int(date.timeIntervalSince1970 / 86_400) % 7
        return String(format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", names[day], c.day ?? 1, months[(c.month ?? 1) - 1],
                      c.year ?? 1970, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }
}
