import ArgumentParser
import FixtureServer
import Foundation

/// `fixture-server`: the recorded upstreams on 127.0.0.1, for demos and manual tests.
@main
struct FixtureServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixture-server",
        abstract: "Serve the recorded upstream responses on 127.0.0.1, with optional faults.",
        discussion: """
            Routes: /target/deals, /target/deals/{id}, /ltk/api/ltk/v2/ltks/?featured=true&limit=20[&last_id=…&seed=…], /reqres/api/users?page=N[&per_page=M], /reqres/api/users/{id}, /dishwasher/api/<file>.json, /dishwasher/images/<name>, /cabify/Products.json. GET /_fixture/requests \
            returns the request log. A scenario file is JSON: {"cabify": [{"status": 503}, {}]} \
            gives the first request a 503 and every later one the data; see README.md for every fault.
            """)

    @Option(help: "Port on 127.0.0.1; 0 picks a free one.")
    var port = 0

    @Option(help: ArgumentHelp("JSON file of faults per route.", valueName: "file"))
    var scenario: String?

    @Option(help: ArgumentHelp("Demand this x-api-key from reqres clients (401 without it).", valueName: "key"))
    var reqresApiKey: String?

    @Option(help: ArgumentHelp("Write a Sources.yml that points every source at this server.", valueName: "file"))
    var writeSources: String?

    func run() async throws {
        var scenarios: [String: [Fault]] = [:]
        if let scenario {
            do {
                scenarios = try JSONDecoder().decode([String: [Fault]].self, from: Data(contentsOf: URL(fileURLWithPath: scenario)))
            } catch {
                throw ValidationError("cannot read scenario \(scenario): \(error)")
            }
        }
        let server = FixtureServer.standard(control: FixtureControl(scenarios: scenarios), reqresKey: reqresApiKey)
        let sourcesFile = writeSources
        try await server.run(port: port) { bound in
            if let sourcesFile, let base = URL(string: "http://127.0.0.1:\(bound)") {
                do {
                    try Data(FixtureServer.sourcesYml(base: base).utf8).write(to: URL(fileURLWithPath: sourcesFile))
                } catch {
                    FileHandle.standardError.write(Data("fixture-server: cannot write \(sourcesFile): \(error)\n".utf8))
                }
            }
            // Unbuffered, so a script waiting for this line sees it at once.
            FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(bound)\n".utf8))
        }
    }
}
