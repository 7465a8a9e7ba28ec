@testable import FeedConfig
import FeedCore
import FeedSupport
@testable import FeedEngine
@testable import FeedFormats
import Foundation
import Testing

/// Every bad configuration names its file, line, column and path, and all problems of
/// one file come out together.
@Suite struct ConfigLoaderTests {
    let loader = ConfigLoader(registry: SourceRegistry([MemorySource.self]), environment: ["TOKEN": "s3cret", "EMPTY": ""])

    func problems(_ yaml: String) -> [String] {
        do {
            _ = try loader.load(text: yaml, file: "Sources.yml", directory: "/nowhere")
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    static let good = """
        sources:
          - id: shop
            plugin: memory
            url: https://memory.test/shop
        """

    @Test func validConfigLoadsWithDefaults() throws {
        let config = try loader.load(text: Self.good, file: "Sources.yml")
        let source = try #require(config.sources.first)
        #expect(source.id == "shop")
        #expect(source.enabled)
        #expect(source.timeout == 10)
        #expect(source.maxPages == 10)
        #expect(source.maxItems == 1000)
        #expect(source.fallback == .cache)
        #expect(source.path == "sources[0]")
    }

    /// `defaults:` gives every source without its own setting one; durations have units.
    @Test func defaultsApplyToEverySourceWithoutItsOwn() throws {
        let config = try loader.load(text: """
            defaults:
              refresh: 1h
              cache_ttl: 15m
              timeout: 20s
              fallback: none
              record: false
            sources:
              - id: plain
                plugin: memory
                url: https://memory.test/a
              - id: own
                plugin: memory
                url: https://memory.test/b
                refresh: 90
                cache_ttl: 1.5m
                timeout: 5
                fallback: cache
                record: true
            """, file: "Sources.yml", directory: "/nowhere")
        let plain = try #require(config.source(id: "plain"))
        let own = try #require(config.source(id: "own"))
        #expect([plain.refresh, plain.cacheTTL, plain.timeout] == [3600, 900, 20])
        #expect(plain.fallback == .none && plain.record == false)
        #expect([own.refresh, own.cacheTTL, own.timeout] == [90, 90, 5])
        #expect(own.fallback == .cache && own.record == true)
        #expect(config.defaultRefresh == 3600)
        #expect(problems("defaults:\n  refresh: soon\n  colour: red\nsources: []\n") == [
            "Sources.yml:2:12: defaults.refresh: expected a number of seconds (or 30s, 15m, 1h, 2d), got text \"soon\"",
            "Sources.yml:3:3: defaults.colour: unknown key (known: cache_ttl, fallback, record, refresh, timeout)",
        ])
    }

    @Test func headersExpandEnvironmentVariables() throws {
        let config = try loader.load(text: """
            sources:
              - id: shop
                plugin: memory
                url: https://memory.test/shop?key=${TOKEN}
                headers:
                  x-api-key: ${TOKEN}
                  x-default: ${MISSING:-fallback}
                  x-empty: ${EMPTY:-was-empty}
                  x-plain: literal
            """, file: "Sources.yml")
        let source = try #require(config.sources.first)
        #expect(source.headers == ["x-api-key": "s3cret", "x-default": "fallback", "x-empty": "was-empty", "x-plain": "literal"])
        #expect(source.url.absoluteString == "https://memory.test/shop?key=s3cret")
        #expect(source.url.redactedString == "https://memory.test/shop?key=REDACTED")
    }

    @Test(arguments: [
        ("sources:\n  - id: shop\n    plugin: [memory\n",
         "Sources.yml:4:1: YAML syntax error: did not find expected ',' or ']' while parsing a flow sequence"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    colour: blue\n",
         "Sources.yml:5:5: sources[0].colour: unknown key (known: cache_ttl, deadline, enabled, fallback, filters, full_content, headers, id, keep, max_body, max_items, max_pages, name, options, plugin, record, refresh, retries, timeout, url)"),
        ("sources:\n  - id: shop\n    plugin: memory\n    urll: https://memory.test/a\n",
         "Sources.yml:4:5: sources[0].urll: unknown key (did you mean \"url\"? known: cache_ttl, deadline, enabled, fallback, filters, full_content, headers, id, keep, max_body, max_items, max_pages, name, options, plugin, record, refresh, retries, timeout, url)"),
        ("sources:\n  - id: shop\n    name: \"Shop\\nplugin: exec\"\n    plugin: memory\n    url: https://memory.test/a\n",
         "Sources.yml:3:11: sources[0].name: holds a line break or control character; a name is one line of text"),
        ("sources:\n  - id: shop\n    name: \"\(String(repeating: "x", count: 201))\"\n    plugin: memory\n    url: https://memory.test/a\n",
         "Sources.yml:3:11: sources[0].name: is 201 characters long; at most 200"),
        ("sources:\n  - id: Shop_1\n    plugin: memory\n    url: https://memory.test/a\n",
         "Sources.yml:2:9: sources[0].id: \"Shop_1\" is not a valid id: use lowercase letters, digits and -, starting with a letter or digit"),
        ("sources:\n  - id: shop\n    plugin: memoryy\n    url: https://memory.test/a\n",
         "Sources.yml:3:13: sources[0].plugin: unknown plugin \"memoryy\" (known: memory)"),
        ("sources:\n  - id: shop\n    plugin: memory\n",
         "Sources.yml:2:5: sources[0].url: is required"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: memory.test/a\n",
         "Sources.yml:4:10: sources[0].url: expected an absolute http(s) URL, got \"memory.test/a\""),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: ftp://memory.test/a\n",
         "Sources.yml:4:10: sources[0].url: expected an absolute http(s) URL, got \"ftp://memory.test/a\""),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    headers:\n      x-api-key: ${NOPE}\n",
         "Sources.yml:6:18: sources[0].headers.x-api-key: environment variable NOPE is not set (set it, or write ${NOPE:-default})"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    headers:\n      x-api-key: ${NOPE\n",
         "Sources.yml:6:18: sources[0].headers.x-api-key: malformed ${…}: write ${NAME} or ${NAME:-default}"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    max_pages: -1\n",
         "Sources.yml:5:16: sources[0].max_pages: must be at least 1, got -1"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    max_items: lots\n",
         "Sources.yml:5:16: sources[0].max_items: expected a whole number, got text \"lots\""),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    timeout: fast\n",
         "Sources.yml:5:14: sources[0].timeout: expected a number of seconds (or 30s, 15m, 1h, 2d), got text \"fast\""),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    timeout: 0\n",
         "Sources.yml:5:14: sources[0].timeout: must be from 0.1 s to 3600 s, got 0"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    enabled: sometimes\n",
         "Sources.yml:5:14: sources[0].enabled: expected true or false, got text \"sometimes\""),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    fallback: tape\n",
         "Sources.yml:5:15: sources[0].fallback: must be one of none, cache, snapshot, got \"tape\""),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    headers: [a, b]\n",
         "Sources.yml:5:14: sources[0].headers: expected a mapping of keys to values, got a list"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    options:\n      size: -3\n",
         "Sources.yml:6:13: sources[0].options.size: must be at least 0, got -3"),
        ("sources:\n  - id: shop\n    plugin: memory\n    url: https://memory.test/a\n    options:\n      colour: red\n",
         "Sources.yml:6:7: sources[0].options.colour: unknown key (known: size)"),
        ("sources: shop\n",
         "Sources.yml:1:10: sources: expected a list, got text \"shop\""),
        ("feeds:\n  - id: shop\n",
         "Sources.yml:1:1: feeds: unknown key (did you mean \"feed\"? known: defaults, digests, feed, filters, keep, merge, sources, state)"),
        ("sources:\n  - just-a-string\n",
         "Sources.yml:2:5: sources[0]: expected a mapping of keys to values, got text \"just-a-string\""),
    ] as [(String, String)])
    func badConfigIsReportedExactly(yaml: String, expected: String) {
        #expect(problems(yaml).contains(expected), "\(problems(yaml))")
    }

    /// A feed list starts from nothing: an empty file, `sources: []`, `sources:` with nothing
    /// under it and a file without the key load as no sources (the commands that read cards
    /// say what to do).
    @Test(arguments: ["", "sources: []\n", "sources:\n", "# mine\n", "feed:\n  title: Mine\n"])
    func anEmptyListLoads(_ yaml: String) throws {
        #expect(problems(yaml) == [])
    }

    @Test func everyProblemOfOneFileIsReportedTogether() {
        let found = problems("""
            sources:
              - id: shop
                plugin: memory
                url: https://memory.test/a
              - id: shop
                plugin: ltkk
                url: nowhere
                timeout: -2
              - plugin: memory
                url: https://memory.test/c
                max_pages: 0
            """)
        #expect(found == [
            "Sources.yml:5:9: sources[1].id: duplicate id \"shop\" (already used by sources[0])",
            "Sources.yml:6:13: sources[1].plugin: unknown plugin \"ltkk\" (known: memory)",
            "Sources.yml:7:10: sources[1].url: expected an absolute http(s) URL, got \"nowhere\"",
            "Sources.yml:8:14: sources[1].timeout: must be from 0.1 s to 3600 s, got -2",
            "Sources.yml:9:5: sources[2].id: is required",
            "Sources.yml:11:16: sources[2].max_pages: must be at least 1, got 0",
        ])
    }

    @Test func cardStoreKeysAreReadAndChecked() throws {
        let config = try loader.load(text: """
            keep: {gone_for: 30d}
            sources:
              - {id: shop, plugin: memory, url: "https://memory.test/shop", record: false, keep: {max_cards: 50}}
              - {id: news, plugin: memory, url: "https://memory.test/news"}
            """, file: "Sources.yml")
        #expect(config.keep == KeepPolicy(goneFor: 30 * 86_400, maxCards: 10_000))
        #expect(config.sources.map(\.record) == [false, true])
        #expect(config.keepPolicy(for: "shop") == KeepPolicy(goneFor: 30 * 86_400, maxCards: 50))
        #expect(config.keepPolicy(for: "news") == config.keep)
        #expect(try loader.load(text: Self.good, file: "Sources.yml").keep == KeepPolicy(goneFor: 90 * 86_400, maxCards: 10_000))
        #expect(problems("""
            keep: {gone_for: soon, max_cards: 0, forever: true}
            sources:
              - {id: shop, plugin: memory, url: "https://memory.test/shop", record: maybe}
            """) == [
            "Sources.yml:1:18: keep.gone_for: expected a duration such as 30d, 12w or 36h, got \"soon\"",
            "Sources.yml:1:35: keep.max_cards: must be at least 1, got 0",
            "Sources.yml:1:38: keep.forever: unknown key (known: gone_for, max_cards)",
            "Sources.yml:3:73: sources[0].record: expected true or false, got text \"maybe\"",
        ])
    }

    @Test func digestsAreValidatedWithTheRest() {
        let found = problems(Self.good + """

            digests:
              - name: daily
                sources: [shop, shoop]
                every: often
                format: pdf
              - name: daily
                max_items: 0
              - sources: [shop]
                template: missing.mustache
            """)
        #expect(found == [
            "Sources.yml:7:21: digests[0].sources[1]: unknown source \"shoop\" (known: shop)",
            "Sources.yml:8:12: digests[0].every: expected a duration such as 30m, 6h or 1d, got \"often\"",
            "Sources.yml:9:13: digests[0].format: must be one of markdown, text, html, jsonl, csv, tsv, atom, jsonfeed, rss, got \"pdf\"",
            "Sources.yml:10:11: digests[1].name: duplicate digest name \"daily\"",
            "Sources.yml:11:16: digests[1].max_items: must be at least 1, got 0",
            "Sources.yml:12:5: digests[2].name: is required",
            "Sources.yml:13:15: digests[2].template: no template file at /nowhere/missing.mustache",
        ])
    }

    @Test func declaredDigestsLoad() throws {
        let config = try loader.load(text: Self.good + "\ndigests:\n  - name: daily\n    every: 6h\n    output: out/d.md\n",
                                     file: "Sources.yml", directory: "/etc/aggregate")
        let digest = try #require(config.digest(named: "daily"))
        #expect(digest.every == 21_600)
        #expect(digest.format == .markdown)
        #expect(digest.sources.isEmpty)
        #expect(digest.output == "/etc/aggregate/out/d.md")
    }

    @Test func environmentInterpolation() throws {
        let env = ["A": "1", "EMPTY": ""]
        #expect(try EnvironmentInterpolation.expand("x${A}y${B:-2}z", environment: env) == "x1y2z")
        #expect(try EnvironmentInterpolation.expand("${EMPTY}", environment: env) == "")
        #expect(try EnvironmentInterpolation.expand("${EMPTY:-d}", environment: env) == "d")
        #expect(try EnvironmentInterpolation.expand("no vars", environment: env) == "no vars")
        #expect(throws: EnvironmentInterpolation.Failure.undefined("B")) {
            try EnvironmentInterpolation.expand("${B}", environment: env)
        }
        #expect(throws: EnvironmentInterpolation.Failure.malformed) {
            try EnvironmentInterpolation.expand("${1 2}", environment: env)
        }
    }

    /// The `feed:` block: what feed readers see; defaults when absent, positions when wrong.
    @Test func theFeedBlockIsReadAndChecked() throws {
        #expect(try loader.load(text: Self.good, file: "Sources.yml").feed == FeedInfo())
        let config = try loader.load(text: Self.good + "\nfeed:\n  title: Deals\n  link: https://example.test/deals\n  id: urn:x\n",
                                     file: "Sources.yml")
        #expect(config.feed == FeedInfo(title: "Deals", link: URL(string: "https://example.test/deals"), id: "urn:x"))
        #expect(problems(Self.good + "\nfeed:\n  titel: Deals\n  link: deals.html\n") == [
            "Sources.yml:6:3: feed.titel: unknown key (known: id, link, title)",
            "Sources.yml:7:9: feed.link: expected an absolute http(s) URL, got \"deals.html\"",
        ])
    }
}
