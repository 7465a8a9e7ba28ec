import ChildProcess
import FeedCore
import Foundation

/// `plugin: exec`: a source written in any language. The program is run once per page
/// with the last cursor it returned in `AGGREGATE_CURSOR`, and prints JSON Lines cards
/// (see ``ExecCardLines``). Its pages go through the engine like HTTP responses
/// (``ExecTransport``), so they are retried, cached and served offline.
public struct ExecSource: FeedSource, LocalUpstreamSource {
    public static let plugin = "exec"
    /// A program has no recorded upstream of its own; its cached pages serve offline.
    public static let snapshots: [RecordedResponse] = []
    /// The reqres.in pages the example program's fixture upstream serves, by page number.
    package static var recordedUserPages: [Int: Data] {
        [1: Data(PackageResources.users_page1_json), 2: Data(PackageResources.users_page2_json)]
    }

    static let optionKeys = ["command", "env"]

    let settings: SourceSettings
    let http: any HTTPTransport
    let program: ExecProgram

    public init(settings: SourceSettings, http: any HTTPTransport) throws {
        self.settings = settings
        self.http = http
        self.program = try Self.program(settings)
    }

    public static func liveTransport(settings: SourceSettings) -> any HTTPTransport {
        guard let program = try? program(settings) else { return ExecTransport.unconfigured }
        return ExecTransport(program: program)
    }

    /// Reads and checks `command` and `env`; every problem at once.
    static func program(_ settings: SourceSettings) throws -> ExecProgram {
        let options = settings.optionsReader()
        var command: [String] = []
        if let items = options.list("command") {
            for (path, node) in items {
                guard case .scalar(let scalar) = node.value, scalar.kind != .null else {
                    options.issues.report(ConfigIssue(location: node.location, path: path,
                                                      message: "expected text (one argument), got \(node.kindDescription)"))
                    continue
                }
                command.append(scalar.text)
            }
            if items.isEmpty { options.report("command", "must list the program and its arguments, e.g. [python3, sources/hn.py]") }
        } else if options.node("command") == nil {
            options.report("command", "is required: the program and its arguments as a list, e.g. [python3, sources/hn.py] (no shell)")
        }
        // A bare name is looked up when the program runs: a disabled entry for a tool
        // this machine lacks must not break the whole file.
        if let program = command.first, program.contains("/"), let problem = ExecCommandCheck.problem(program, directory: settings.directory,
                                                                              environment: settings.environment) {
            options.report("command", problem)
        }
        var environment: [String: String] = [:]
        if let env = options.map("env") {
            for entry in env.entries {
                if !ExecCommandCheck.isVariableName(entry.key) {
                    env.report(entry.key, "\"\(entry.key)\" is not an environment variable name (letters, digits and _)", at: entry.keyLocation)
                } else if entry.key.hasPrefix("AGGREGATE_") {
                    env.report(entry.key, "AGGREGATE_* variables are set by aggregate itself", at: entry.keyLocation)
                } else if let value = env.expandedString(entry.key, environment: settings.environment) {
                    environment[entry.key] = value
                }
            }
        }
        try options.finish(allowedKeys: optionKeys)
        return ExecProgram(command: command, environment: environment, directory: settings.directory,
                           sourceID: settings.id, url: settings.hasHTTPURL ? settings.url : nil,
                           timeout: settings.timeout)
    }

    public func page(after cursor: String?) async throws -> SourcePage {
        let response = try await http.get(pageURL(cursor: cursor))
        guard response.isSuccess else { throw SourceError.badStatus(response.status) }
        guard !ChildProcess.lines(response.body).isEmpty else {
            // Nothing at all is more often a broken program than an empty feed, which
            // says so with {"next": null}.
            throw SourceError.failed("printed nothing on stdout; a program with no cards prints {\"next\": null}")
        }
        var page = ExecCardLines.page(response.body, sourceID: settings.id, json: settings.json)
        if let stderr = response.headers[ExecTransport.stderrHeader], !stderr.isEmpty {
            page.notes += stderr.split(separator: "\n").map(String.init)
        }
        if page.cards.isEmpty && !page.skipped.isEmpty && page.next != nil {
            // Nothing readable but a cursor: going on would only repeat the failure.
            throw SourceError.failed("no line of the page was a card: \(page.skipped[0])")
        }
        return page
    }

    /// `exec://<id>/page?cursor=C&program=<hash>`: the cache key of one page. The hash of
    /// argv means a changed command never reads the old command's cached pages.
    func pageURL(cursor: String?) -> URL {
        var components = URLComponents()
        components.scheme = "exec"
        components.host = settings.id
        components.path = "/page"
        components.queryItems = [URLQueryItem(name: "program", value: ExecCommandCheck.fingerprint(program.command))]
            + (cursor.map { [URLQueryItem(name: "cursor", value: $0)] } ?? [])
        return components.url ?? URL(fileURLWithPath: "/")
    }
}
