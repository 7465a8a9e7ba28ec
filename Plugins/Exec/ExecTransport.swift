import FeedCore
import Foundation

/// Plays the live upstream of a `plugin: exec` source: a request for
/// `exec://<id>/page?cursor=C` runs the program once and answers its stdout as a 200, so
/// the engine's retries, deadline, cache and fallbacks work as for HTTP sources.
struct ExecTransport: HTTPTransport {
    /// The response header that carries the program's stderr lines to the source
    /// (they become `--verbose` notes); never stored by the cache.
    static let stderrHeader = "x-exec-stderr"

    /// `nil` when the options did not validate (the loader has said so already).
    let program: ExecProgram?

    static let unconfigured = ExecTransport(program: nil)

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let program else { throw SourceError.failed("its options are invalid; run `aggregate validate`") }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let cursor = components?.queryItems?.first { $0.name == "cursor" }?.value
        let run = try await program.run(cursor: cursor)
        let stderr = run.stderrLines.map(program.redacted)
        guard run.status == 0 else {
            let said = stderr.last.map { ": \($0)" } ?? " (it printed nothing on stderr)"
            throw SourceError.failed("\(program.command.joined(separator: " ")) exited with status \(run.status)\(said)")
        }
        return HTTPResponse(status: 200, headers: [Self.stderrHeader: stderr.joined(separator: "\n")],
                            body: run.stdout, url: request.url)
    }
}
