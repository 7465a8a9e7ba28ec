import FeedConfig
import FeedCore
import FeedEngine
import FeedSourceTesting
import Foundation
import Testing
import WebFeed

/// What `import` (and anything else that adds sources) writes into Sources.yml: hostile
/// titles, folders and URLs stay data. An OPML title once closed its `#` comment with a
/// line break YAML knows and Swift's `\n` replacement did not (CR, NEL, LS, PS), and
/// added a `plugin: exec` source that the next plain run executed.
@Suite struct SourcesFileWriterTests {
    static let base = """
        # My sources
        sources:
          - id: news          # the local paper
            plugin: feed
            url: https://news.example.com/rss.xml

        digests:
          - name: daily
            sources: [news]

        """

    /// Every character YAML reads as a line break, and the indicators and escapes that
    /// mean something at the start of a line, in a comment or in a flow list.
    static let hostile: [String] = [
        "\n", "\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}", "\u{0B}", "\u{0C}", "\t", "\u{1B}[31m", "\u{FEFF}", "\u{0}",
        "\u{202E}", "\u{7F}", "\u{9B}", "\u{FFFE}",
        "-", "- ", "? ", ": ", ",", "[", "]", "{", "}", "#", "&a", "*a", "!!str", "!", "|", ">", "'", "\"", "%", "@", "`",
        "\\", "\\n", "\\x85", "${HOME}", "---", "...", "<<: *a",
        "  - id: pwned\n    plugin: exec\n    command: [touch, /tmp/pwned]",
    ]

    static func registry() -> SourceRegistry { SourceRegistry([WebFeedSource.self]) }

    /// Titles, folders and URLs made of hostile pieces, 400 rounds of them: the written
    /// file always loads as the old sources plus exactly the new entries, with each value
    /// as given. The pieces are drawn by a fixed stride through the list and the printable
    /// ASCII characters, so a failing round is the same every run.
    @Test func everyHostileTitleFolderAndURLStaysData() throws {
        let loader = ConfigLoader(registry: Self.registry(), environment: [:])
        var draw = 0
        func next(_ count: Int) -> Int {
            draw = (draw &* 1_103_515_245 &+ 12_345) & 0x7FFF_FFFF
            return draw % count
        }
        for round in 0 ..< 400 {
            func text(_ count: Int) -> String {
                (0 ..< count).map { _ in
                    next(2) == 0 ? Self.hostile[next(Self.hostile.count)] : String(UnicodeScalar(UInt8(0x20 + next(0x5F))))
                }.joined()
            }
            let entries = (0 ..< 1 + next(3)).map { index in
                let query = text(4).addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? "x"
                return NewSourceEntry(id: "feed-\(round)-\(index)", name: next(2) == 0 ? text(6) : nil, plugin: "feed",
                                      url: URL(string: "https://example.com/\(round)/feed?q=\(query)")!,
                                      tags: (0 ..< next(3)).map { _ in text(5) },
                                      comment: text(8) + " (imported from x.opml)")
            }
            let written: String
            do {
                written = try SourcesFileEdit.adding(entries, to: Self.base, file: "Sources.yml")
            } catch {
                Issue.record("round \(round): \(error): \(SourcesFileEdit.yaml(for: entries, indent: "  ").debugDescription)")
                continue
            }
            let config = try loader.load(text: written, file: "Sources.yml")
            #expect(config.sources.map(\.id) == ["news"] + entries.map(\.id), "round \(round): \(written)")
            #expect(config.sources.allSatisfy { $0.plugin == "feed" })
            #expect(config.digests.map(\.name) == ["daily"])
            for (source, entry) in zip(config.sources.dropFirst(), entries) {
                #expect(source.url == entry.url)
                // A name is one line of what was given (or none, when nothing printable was).
                #expect(source.name == entry.name, "round \(round)")
                if let name = source.name { #expect(!name.contains { $0.isNewline }) }
                let tags = source.options.flatMap { options -> [String]? in
                    guard case .map(let pairs) = options.value, let node = pairs.first(where: { $0.key == "tags" })?.value,
                          case .list(let items) = node.value else { return nil }
                    return items.compactMap { if case .scalar(let scalar) = $0.value { scalar.text } else { nil } }
                } ?? []
                #expect(tags == entry.tags, "round \(round)")
                #expect(entry.tags.allSatisfy { !$0.contains("\u{FEFF}") })
            }
            // The file grows by the entries' own lines: one per key, one blank between.
            let lines = entries.map { 3 + ($0.name == nil ? 0 : 1) + ($0.tags.isEmpty ? 0 : 2) }.reduce(0, +) + entries.count
            #expect(written.split(separator: "\n", omittingEmptySubsequences: false).count
                    == Self.base.split(separator: "\n", omittingEmptySubsequences: false).count + lines)
        }
    }

    @Test func aCommentIsOneLineOfPrintableText() {
        #expect(SourcesFileEdit.commentText("Evil\u{2028}  - id: x\r\n\u{85}plugin: exec\u{1B}[2J\u{202E}") == "Evil - id: x plugin: exec [2J")
        #expect(SourcesFileEdit.commentText(String(repeating: "a", count: 300)).count == 120)
    }

    @Test func quotedScalarsEscapeEveryLineBreak() {
        #expect(SourcesFileEdit.quoted("a\u{85}b\u{2028}c\u{2029}d\r\ne\u{FEFF}\u{1B}") == #""a\Nb\Lc\Pd\r\ne\uFEFF\x1B""#)
    }
}
