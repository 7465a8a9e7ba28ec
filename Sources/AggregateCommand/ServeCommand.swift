import ArgumentParser
import FeedCore
import FeedEngine
import FeedServer
import Foundation

/// `aggregate serve`: the merged feed over HTTP for feed readers.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the merged feed over HTTP: /feed.atom, /feed.json, /feed.rss, /feed.jsonl, /cards/ID, /sources, /healthz.",
        discussion: """
            Feed routes take the command line's filters as query parameters: source (repeatable), kind, q, sort, \
            order, page, per_page. Upstreams are read through the same cache and fallbacks as the command line; \
            while every source is fresh a request sends no upstream request. Stops on SIGTERM or SIGINT after the \
            requests in flight. One access-log line per request on stderr.
            """)

    @Option(help: "Address to listen on (127.0.0.1: this machine only).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one (printed on start).")
    var port = 8080

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, got \(port)") }
    }

    func run() async throws {
        let host = host
        try await common.withRunner(sharedRequests: SharedRequests(), stateConnections: .pool) { runner, config, state in
            let server = FeedServer(runner: runner, config: config, firstSeen: state?.firstSeen, host: host, port: port,
                                    accessLog: { Terminal.writeError($0) })
            do {
                try await server.run { bound in
                    Terminal.writeError("aggregate: serving \(config.sources.filter(\.enabled).count) sources on http://\(host):\(bound)/ (feeds: /feed.atom /feed.json /feed.rss /feed.jsonl)")
                }
            } catch {
                Terminal.writeError("aggregate: cannot serve on \(host):\(port): \(PlainWords.describe(error))")
                throw ExitStatus.failed.code
            }
            Terminal.writeError("aggregate: stopped")
        }
    }
}
