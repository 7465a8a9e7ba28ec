import ArgumentParser
import FeedCore
import FixtureKit
import FixtureServer
import FixtureCatalogue
import Foundation

/// `fixture-server`: the recorded upstreams on 127.0.0.1, for demos and manual tests.
@main
struct FixtureServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixture-server",
        abstract: "Serve the recorded upstream responses on 127.0.0.1, with optional faults.",
        discussion: """
            Every built-in source's upstream under its own route (/<route>/…, listed in docs/fixture-server.md). GET /_fixture/requests returns the request log. A scenario file is JSON: {"cabify": [{"status": 503}, {}]} \
            gives the first request a 503 and every later one the data; see docs/fixture-server.md for every fault.
            """)

    @Option(help: "Port on 127.0.0.1; 0 picks a free one.")
    var port = 0

    @Option(help: ArgumentHelp("JSON file of faults per route.", valueName: "file"))
    var scenario: String?

    @Option(name: .customLong("require-key"), help: ArgumentHelp(
        "Make a route demand this x-api-key (401 without it), as route=key (repeatable).", valueName: "route=key"))
    var requiredKeys: [String] = []

    @Option(help: ArgumentHelp("Write a Sources.yml that points every source at this server.", valueName: "file"))
    var writeSources: String?

    @Option(help: ArgumentHelp("Replicate every list N-fold with distinct ids and prices (for benchmarks).", valueName: "N"))
    var scale = 1

    @Option(help: ArgumentHelp("Also serve N made-up feeds of 50 entries on /feeds/0.xml … (Atom and RSS by turns; for benchmarks).",
                               valueName: "N"))
    var feeds = 0

    @Option(help: ArgumentHelp("Also serve N made-up shop list pages of 100 items on /pages/0.html … (for the html benchmark).",
                               valueName: "N"))
    var pages = 0

    @Option(help: ArgumentHelp("Entries in each made-up feed of --feeds (for the card store's million-card benchmark).", valueName: "N"))
    var feedEntries = FeedFarm.entriesPerFeed

    @Option(help: ArgumentHelp("Write the made-up feeds with N made-up words, drawn by Zipf's law (for the search benchmark); 0 = 28 words, each in every entry.", valueName: "N"))
    var feedWords = 0

    func validate() throws {
        guard (0...300_000).contains(feedWords) else { throw ValidationError("--feed-words must be between 0 and 300000, got \(feedWords)") }
        guard (1...100_000).contains(scale) else { throw ValidationError("--scale must be between 1 and 100000, got \(scale)") }
        guard (0...100_000).contains(feeds) else { throw ValidationError("--feeds must be between 0 and 100000, got \(feeds)") }
        guard (0...10_000).contains(pages) else { throw ValidationError("--pages must be between 0 and 10000, got \(pages)") }
        guard (1...100_000).contains(feedEntries) else { throw ValidationError("--feed-entries must be between 1 and 100000, got \(feedEntries)") }
    }

    func run() async throws {
        var scenarios: [String: [Fault]] = [:]
        if let scenario {
            do {
                scenarios = try JSONDecoder().decode([String: [Fault]].self, from: Data(contentsOf: URL(fileURLWithPath: scenario)))
            } catch {
                throw ValidationError("cannot read scenario \(scenario): \(error)")
            }
        }
        var keys: [String: String] = [:]
        for pair in requiredKeys {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw ValidationError("--require-key takes route=key, got \"\(pair)\"")
            }
            keys[parts[0]] = parts[1]
        }
        let sources = FixtureCatalogue.sources
        let standard = FixtureServer.standard(sources, control: FixtureControl(scenarios: scenarios),
                                              options: FixtureOptions(requiredKeys: keys), scale: scale)
        var farms: [any FixtureUpstream] = []
        if feeds > 0 { farms.append(FeedFarm(count: feeds, entries: feedEntries, vocabulary: feedWords)) }
        if pages > 0 { farms.append(PageFarm(count: pages)) }
        let server = farms.isEmpty ? standard : FixtureServer(upstreams: standard.upstreams + farms, control: standard.control, scale: scale)
        let sourcesFile = writeSources
        try await server.run(port: port) { bound in
            if let sourcesFile, let base = URL(string: "http://127.0.0.1:\(bound)") {
                do {
                    try Data(FixtureServer.sourcesYml(base: base, entries: FixtureServer.standardEntries(sources)).utf8).write(to: URL(fileURLWithPath: sourcesFile))
                } catch {
                    FileHandle.standardError.write(Data("fixture-server: cannot write \(sourcesFile): \(error)\n".utf8))
                }
            }
            // Unbuffered, so a script waiting for this line sees it at once.
            FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(bound)\n".utf8))
        }
    }
}
