import FeedCore
import FeedSourceTesting
import SourceCatalogue
import Foundation
import Testing

/// The built `aggregate` binary, offline: stdout/stderr separation, exit codes,
/// formats, colour. Sources that would need the network are served from snapshots or
/// fail on an unrecorded URL, so these tests open no socket.
@Suite struct CommandLineTests {
    static let cabifyLines = [
        #"{"details":{"offer":"2 for 1"},"id":"cabify:VOUCHER","kind":"item","origin":"snapshot","price":{"amount":5,"currency":"EUR"},"source":"cabify","tags":["2 for 1"],"title":"Cabify Voucher","v":1}"#,
        #"{"details":{"offer":"3+ for €19.00 each"},"id":"cabify:TSHIRT","kind":"item","origin":"snapshot","price":{"amount":20,"currency":"EUR"},"source":"cabify","tags":["3+ for €19.00 each"],"title":"Cabify T-Shirt","v":1}"#,
        #"{"id":"cabify:MUG","kind":"item","origin":"snapshot","price":{"amount":7.5,"currency":"EUR"},"source":"cabify","tags":[],"title":"Cabify Coffee Mug","v":1}"#,
    ]

    /// Every plugin name, as config errors list them.
    static let knownPlugins = SourceCatalogue.sources.map { $0.plugin }.sorted().joined(separator: ", ")

    /// The Cabify entry of the shipped Sources.yml.
    static let cabifyYml = """
        sources:
          - id: cabify
            plugin: cabify
            url: https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json
            fallback: snapshot

        """

    /// Every shipped source works offline from its recorded snapshot, interleaved.
    @Test func theShippedConfigServesEverySourceOffline() async throws {
        let run = try await Workspace(sourcesYml: try Workspace.shippedSourcesYml).aggregate("--offline", "--per-page", "1000")
        #expect(run.status == 0)
        #expect(run.stderr == "")
        let cards = try run.stdoutLines.map { try JSONDecoder().decode(Card.self, from: Data($0.utf8)) }
        let expected = try await ShippedConfig.offlineExpectation()
        #expect(Dictionary(grouping: cards, by: \.source).mapValues(\.count) == expected.counts)
        // Round-robin in config order: the first card of every source comes first.
        #expect(Array(cards.prefix(expected.firstIDs.count).map(\.id)) == expected.firstIDs)
        #expect(cards.allSatisfy { $0.origin == .snapshot })
    }

    /// The Cabify config plus a second shop whose URL has no recording.
    static var withBrokenShop: String {
        get throws {
            Self.cabifyYml + """
                  - id: shop
                    plugin: cabify
                    url: http://127.0.0.1:9/products.json?api_key=hunter2
                    fallback: none
                    options:
                      offers: []

                """
        }
    }

    @Test func offlineFeedPrintsExactJSONLinesAndNothingElse() async throws {
        let run = try await Workspace(sourcesYml: Self.cabifyYml).aggregate("--offline")
        #expect(run.status == 0)
        #expect(run.stdoutLines == Self.cabifyLines)
        #expect(run.stderr == "")
    }

    /// Offline, a `json` source pointed at an API nobody recorded is told so, not shown the
    /// recordings of unrelated sources (issue 28, defect 18).
    @Test func anOfflineJSONSourceWithoutRecordingsIsToldSoPlainly() async throws {
        let run = try await Workspace(sourcesYml: """
            sources:
              - id: mine
                plugin: json
                url: https://api.example.test/items
                options:
                  items: items
                  fields: {id: id, title: name}

            """).aggregate("--offline")
        #expect(run.status == 1)
        #expect(run.stderrLines == ["mine: no recorded response for this URL; nothing was recorded from api.example.test (https://api.example.test/items)"])
    }

    @Test func partialRunPrintsTheGoodSourceNamesTheBadOneAndExits3() async throws {
        let run = try await Workspace(sourcesYml: try Self.withBrokenShop).aggregate("--offline")
        #expect(run.status == 3)
        #expect(run.stdoutLines == Self.cabifyLines)
        #expect(run.stderrLines == ["shop: no recorded response for this URL; recorded: https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json (http://127.0.0.1:9/products.json?api_key=REDACTED)"])
        #expect(!run.stderr.contains("hunter2"))
    }

    @Test func everySourceFailingExits1() async throws {
        let run = try await Workspace(sourcesYml: try Self.withBrokenShop).aggregate("--offline", "--source", "shop")
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(run.stderrLines.count == 1)
    }

    @Test func strictTurnsAFallbackIntoExit3() async throws {
        let workspace = try Workspace(sourcesYml: Self.cabifyYml)
        let run = try await workspace.aggregate("--source", "cabify", "--strict",
                                          environment: ["ALL_PROXY": "", "HTTPS_PROXY": ""])
        // Without a network the live fetch fails and the snapshot serves; with one, live
        // cards carry no origin. Either way stdout has the three cards.
        #expect(run.stdoutLines.count == 3)
        if run.stdout.contains(#""origin":"snapshot""#) {
            #expect(run.status == 3)
            #expect(run.stderrLines.last?.hasSuffix("; using recorded snapshot") == true)
        } else {
            #expect(run.status == 0)
        }
    }

    @Test func configErrorsExit2WithEveryProblem() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: cabify
                plugin: cabbify
                url: https://example.test/p.json
                max_pages: 0
            """)
        let run = try await workspace.aggregate()
        #expect(run.status == 2)
        #expect(run.stdout == "")
        #expect(run.stderrLines == [
            "Sources.yml:3:13: sources[0].plugin: unknown plugin \"cabbify\" (known: \(Self.knownPlugins))",
            "Sources.yml:5:16: sources[0].max_pages: must be at least 1, got 0",
        ])
        let validate = try await workspace.aggregate("validate")
        #expect(validate.status == 2)
        #expect(validate.stderrLines == run.stderrLines)
    }

    @Test func validateSaysOkAndExits0() async throws {
        let run = try await Workspace(sourcesYml: try Self.withBrokenShop).aggregate("validate")
        #expect(run.status == 0)
        #expect(run.stdout == "")
        #expect(run.stderrLines == ["Sources.yml: ok, 2 sources (2 enabled)"])
    }

    @Test func usageErrorsExit2() async throws {
        let workspace = try Workspace(sourcesYml: Self.cabifyYml)
        let unknown = try await workspace.aggregate("--offline", "--source", "nope")
        #expect(unknown.status == 2)
        #expect(unknown.stderrLines == ["aggregate: unknown source \"nope\" in Sources.yml (known: cabify)"])
        let badPage = try await workspace.aggregate("--page", "0")
        #expect(badPage.status == 2)
        #expect(badPage.stderrLines.first == "Error: --page must be between 1 and 1000000, got 0")
        let badFlag = try await workspace.aggregate("--colour")
        #expect(badFlag.status == 2)
        #expect(badFlag.stderrLines.first == "Error: Unknown option '--colour'")
        let badFormat = try await workspace.aggregate("--format", "xml")
        #expect(badFormat.status == 2)
        #expect(badFormat.stderr.contains("The value 'xml' is invalid for '--format <format>'"))
    }

    @Test func missingConfigIsExplained() async throws {
        let run = try await Workspace().aggregate("--offline")
        #expect(run.status == 2)
        #expect(run.stderr.contains("no Sources.yml found (looked for "))
        #expect(run.stderr.hasSuffix("pass --config PATH\n"))
        let explicit = try await Workspace().aggregate("--config", "nowhere.yml")
        #expect(explicit.stderrLines == ["no configuration file at nowhere.yml"])
    }

    @Test func configIsFoundUnderXDGConfigHome() async throws {
        let workspace = try Workspace()
        try workspace.write("xdg/aggregate/Sources.yml", Self.cabifyYml)
        let run = try await workspace.aggregate("--offline", environment: ["XDG_CONFIG_HOME": workspace.url.appendingPathComponent("xdg").path])
        #expect(run.status == 0)
        #expect(run.stdoutLines == Self.cabifyLines)
    }

    @Test func pagePastTheEndPrintsNothingAndSaysHowManyPages() async throws {
        let run = try await Workspace(sourcesYml: Self.cabifyYml).aggregate("--offline", "--page", "2")
        #expect(run.status == 0)
        #expect(run.stdout == "")
        #expect(run.stderrLines == ["aggregate: page 2 is past the end: there is 1 page (3 cards at 20 per page)"])
    }

    @Test func sortingFilteringAndPaging() async throws {
        let workspace = try Workspace(sourcesYml: Self.cabifyYml)
        let byPrice = try await workspace.aggregate("--offline", "--sort", "price", "--order", "desc", "--format", "tsv")
        #expect(byPrice.stdoutLines.map { $0.split(separator: "\t").first.map(String.init) ?? "" }
            == ["id", "cabify:TSHIRT", "cabify:MUG", "cabify:VOUCHER"])
        let second = try await workspace.aggregate("--offline", "--sort", "title", "--per-page", "1", "--page", "2")
        #expect(second.stdoutLines == [Self.cabifyLines[1]])
        let query = try await workspace.aggregate("--offline", "--query", "MÚG")
        #expect(query.stdoutLines == [Self.cabifyLines[2]])
        let none = try await workspace.aggregate("--offline", "--kind", "post")
        #expect(none.status == 0)
        #expect(none.stdout == "")
        #expect(none.stderrLines == ["aggregate: no cards match the filters"])
    }

    @Test func csvFollowsRFC4180() async throws {
        let run = try await Workspace(sourcesYml: Self.cabifyYml).aggregate("--offline", "--format", "csv")
        #expect(run.stdout == """
            id,source,kind,title,summary,price,currency,regular_price,url,image,author,published,tags,origin\r
            cabify:VOUCHER,cabify,item,Cabify Voucher,,5,EUR,,,,,,2 for 1,snapshot\r
            cabify:TSHIRT,cabify,item,Cabify T-Shirt,,20,EUR,,,,,,3+ for €19.00 each,snapshot\r
            cabify:MUG,cabify,item,Cabify Coffee Mug,,7.5,EUR,,,,,,,snapshot\r

            """)
    }

    @Test func textIsAlignedFittedAndUncolouredWhenPiped() async throws {
        let workspace = try Workspace(sourcesYml: Self.cabifyYml)
        let run = try await workspace.aggregate("--offline", "--format", "text")
        #expect(run.stdout == """
            cabify  Cabify Voucher      €5.00  [snapshot]  VOUCHER  2 for 1
            cabify  Cabify T-Shirt     €20.00  [snapshot]  TSHIRT   3+ for €19.00 each
            cabify  Cabify Coffee Mug   €7.50  [snapshot]  MUG

            """)
        let narrow = try await workspace.aggregate("--offline", "--format", "text", environment: ["COLUMNS": "40"])
        // At 40 columns the title keeps its room; the marker is one letter, never cut.
        #expect(narrow.stdoutLines == [
            "cabify  Cabify Voucher      €5.00  [s]",
            "cabify  Cabify T-Shirt     €20.00  [s]",
            "cabify  Cabify Coffee Mug   €7.50  [s]",
        ])
        #expect(narrow.stdoutLines.allSatisfy { $0.count <= 40 })
    }

    /// The shortened ids the text view prints are ids `show` takes (issue 28, defect 17).
    @Test func showTakesTheIdsTheTextViewPrints() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let text = try await workspace.aggregate("--offline", "--source", "ltk", "--format", "text", "--per-page", "1")
        let printed = try #require(text.stdout.split(separator: " ").first { $0.contains("…") })
        #expect(printed == "c70ee07…0004")
        let shown = try await workspace.aggregate("--offline", "show", "ltk:\(printed)", "--format", "jsonl")
        #expect(shown.status == 0)
        let whole = try await workspace.aggregate("--offline", "show", "ltk:c70ee072-b8f8-11ec-a164-0242ac110004", "--format", "jsonl")
        #expect(shown.stdout == whole.stdout && whole.status == 0)
        let ambiguous = try await workspace.aggregate("--offline", "show", "ltk:c7…0004")
        #expect(ambiguous.status == 1)
        #expect(ambiguous.stderrLines.last?.hasPrefix(#"ltk: "c7…0004" matches 72 cards (ltk:c70ee072-b8f8-11ec-a164-0242ac110004, "#) == true)
        #expect(ambiguous.stderrLines.last?.hasSuffix("; give more of the id") == true)
    }

    /// `script` gives the binary a real terminal: text by default, coloured, unless NO_COLOR.
    @Test func colourOnlyOnATerminalAndNeverWithNoColor() async throws {
        let workspace = try Workspace(sourcesYml: Self.cabifyYml)
        let command = "\(Binary.aggregate.url.path) --offline --source cabify"
        let terminal = try await Binary(name: "script").run(["-qec", command, "/dev/null"], in: workspace.url,
                                                     environment: ["COLUMNS": "100", "TERM": "xterm"], absolute: "/usr/bin/script")
        #expect(terminal.stdout.contains("\u{1B}[2mcabify"))
        #expect(terminal.stdout.contains("\u{1B}[31m[snapshot]"))
        #expect(!terminal.stdout.contains("{\""))
        let plain = try await Binary(name: "script").run(["-qec", command, "/dev/null"], in: workspace.url,
                                                  environment: ["COLUMNS": "100", "TERM": "xterm", "NO_COLOR": "1"],
                                                  absolute: "/usr/bin/script")
        #expect(!plain.stdout.contains("\u{1B}["))
        #expect(plain.stdout.contains("cabify  Cabify Voucher      €5.00  [snapshot]  VOUCHER  2 for 1"))
    }

    @Test func showPrintsOneCardOrExplains() async throws {
        let workspace = try Workspace(sourcesYml: Self.cabifyYml)
        let found = try await workspace.aggregate("show", "cabify:MUG", "--offline", "--format", "jsonl")
        #expect(found.status == 0)
        #expect(found.stdoutLines == [Self.cabifyLines[2]])
        let missing = try await workspace.aggregate("show", "cabify:FOO", "--offline")
        #expect(missing.status == 1)
        #expect(missing.stdout == "")
        #expect(missing.stderrLines == ["cabify: no item \"FOO\""])
        let unknownSource = try await workspace.aggregate("show", "ltkk:1", "--offline")
        #expect(unknownSource.status == 2)
        #expect(unknownSource.stderrLines == ["aggregate: unknown source \"ltkk\" in Sources.yml (known: cabify)"])
        let malformed = try await workspace.aggregate("show", "MUG", "--offline")
        #expect(malformed.status == 2)
        #expect(malformed.stderrLines == ["aggregate: \"MUG\" is not a card id; write SOURCE:ID, e.g. cabify:1"])
    }

    @Test func sourcesListsWithoutSecrets() async throws {
        let workspace = try Workspace(sourcesYml: try Self.withBrokenShop + """
                headers:
                  x-api-key: ${TOKEN}

            """)
        let text = try await workspace.aggregate("sources", "--format", "text", environment: ["TOKEN": "s3cret-token"])
        #expect(text.status == 0)
        #expect(text.stdoutLines == [
            "cabify  cabify  enabled   https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json",
            "shop    cabify  enabled   http://127.0.0.1:9/products.json?api_key=REDACTED",
        ])
        let jsonl = try await workspace.aggregate("sources", environment: ["TOKEN": "s3cret-token"])
        #expect(jsonl.stdoutLines.last == #"{"enabled":true,"fallback":"none","headers":["x-api-key"],"id":"shop","plugin":"cabify","url":"http://127.0.0.1:9/products.json?api_key=REDACTED"}"#)
        let csv = try await workspace.aggregate("sources", "--format", "csv", environment: ["TOKEN": "s3cret-token"])
        #expect(csv.stdout == """
            id,plugin,enabled,url,fallback,headers,filters\r
            cabify,cabify,true,https://gist.githubusercontent.com/palcalde/6c19259bd32dd6aafa327fa557859c2f/raw/ba51779474a150ee4367cda4f4ffacdcca479887/Products.json,snapshot,,\r
            shop,cabify,true,http://127.0.0.1:9/products.json?api_key=REDACTED,none,x-api-key,\r

            """)
        let tsv = try await workspace.aggregate("sources", "--format", "tsv", environment: ["TOKEN": "s3cret-token"])
        #expect(tsv.stdoutLines.first == "id\tplugin\tenabled\turl\tfallback\theaders\tfilters")
        #expect(tsv.stdoutLines.count == 3)
        #expect(!(text.stdout + text.stderr + jsonl.stdout + jsonl.stderr + csv.stdout).contains("s3cret"))
        #expect(!(text.stdout + jsonl.stdout + csv.stdout).contains("hunter2"))
    }

    /// Options before the subcommand work too, as with git and gh.
    @Test func commonOptionsMayComeBeforeTheSubcommand() async throws {
        let workspace = try Workspace()
        try workspace.write("conf/shop.yml", Self.cabifyYml)
        let run = try await workspace.aggregate("--config", "conf/shop.yml", "--offline", "show", "cabify:MUG", "--format", "jsonl")
        #expect(run.status == 0)
        #expect(run.stdoutLines == [Self.cabifyLines[2]])
        // Every state option too, in both spellings.
        for state in [["--state", "here"], ["--state=here"], ["--state-dir", "there"], ["--state-dir=there"]] {
            let moved = try await workspace.aggregate(arguments: ["--config", "conf/shop.yml"] + state + ["--offline", "show", "cabify:MUG", "--format", "jsonl"])
            #expect(moved.status == 0, "\(state): \(moved.stderr)")
            #expect(moved.stdoutLines == [Self.cabifyLines[2]])
        }
        #expect(FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("here/cache.sqlite").path))
        #expect(FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("there/cache.sqlite").path))
    }

    @Test func helpAndVersionExit0OnStdout() async throws {
        let workspace = try Workspace()
        let help = try await workspace.aggregate("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: aggregate <subcommand>"))
        let feedHelp = try await workspace.aggregate("feed", "--help")
        #expect(feedHelp.stdout.contains("--per-page <per-page>"))
        let version = try await workspace.aggregate("--version")
        #expect(version.stdoutLines == ["0.1.0"])
    }
}

/// The built binaries as shipped: alone, and the fixture server as its own process.
@Suite struct ShippedBinaryTests {
    /// Snapshots are compiled in: the binary copied alone to an empty folder still serves them.
    @Test func aCopiedBinaryRunsOfflineAlone() async throws {
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let copy = workspace.url.appendingPathComponent("bin/aggregate")
        try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Binary.aggregate.url, to: copy)
        let run = try await Binary(name: "aggregate").run(["--offline", "--per-page", "1000", "--state-dir", "state"],
                                                        in: workspace.url, absolute: copy.path)
        #expect(run.status == 0)
        #expect(run.stderr == "")
        let expected = try await ShippedConfig.offlineExpectation()
        #expect(run.stdoutLines.count == expected.counts.values.reduce(0, +))
    }

    @Test func theFixtureServerExecutableReadsAScenarioFile() async throws {
        let workspace = try Workspace()
        try workspace.write("scenario.json", #"{"cabify": [{"status": 503}, {}]}"#)
        let log = workspace.url.appendingPathComponent("server.out")
        let (process, exited) = try Binary.fixtureServer.launch(
            ["--port", "0", "--scenario", "scenario.json", "--write-sources", "Sources.yml"], in: workspace.url, stdout: log)
        defer { process.terminate() }
        var line = ""
        for _ in 0..<200 where !line.hasSuffix("\n") || !FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("Sources.yml").path) {
            try await Task.sleep(for: .milliseconds(50))
            line = try String(contentsOf: log, encoding: .utf8)
        }
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        let run = try await workspace.run("--source", "cabify", "--verbose")
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 3)
        #expect(run.stderrLines.first?.contains("HTTP 503") == true)
        process.terminate()
        #expect(await process.awaitExit(exited))
    }
}
