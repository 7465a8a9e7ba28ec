import FeedState
import Foundation

/// Runs a built executable of this package (next to the test bundle) and captures
/// what it printed, through ``TestProcess``.
public struct Binary: Sendable {
    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        public var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    }

    public static let productsDirectory: URL = {
        let bundle = Bundle.main.bundleURL
        return bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
    }()

    public static let aggregate = Binary(name: "aggregate")
    public static let fixtureServer = Binary(name: "fixture-server")

    public var name: String
    public var url: URL { Self.productsDirectory.appendingPathComponent(name) }

    /// The executable `name` of this package's products.
    public init(name: String) {
        self.name = name
    }

    /// Runs with `arguments` in `directory`; the environment is minimal and explicit so
    /// the developer's own variables (NO_COLOR, XDG_*) cannot change the result.
    public func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:],
                    absolute: String? = nil, stdin: String? = nil,
                    timeLimit: Duration = TestProcess.defaultTimeLimit) async throws -> Run {
        var env = ["PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path]
        env.merge(environment) { _, new in new }
        return try await TestProcess.run(absolute.map(URL.init(fileURLWithPath:)) ?? url, arguments, in: directory,
                                          environment: env, stdin: stdin, timeLimit: timeLimit)
    }
}

extension Binary {
    /// Starts the binary in the background with stdout going to `stdout` (stderr
    /// discarded); the stream finishes when it exits. For tests that kill or stop it.
    public func launch(_ arguments: [String], in directory: URL, stdout: URL) throws -> (process: Process, exited: AsyncStream<Void>) {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.currentDirectoryURL = directory
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        return (process, try process.start())
    }
}

/// A temporary working directory, removed when the test ends.
/// Its state is `./state` (SQLite) or a PostgreSQL database of its own (dropped with it).
public final class Workspace: Sendable {
    public let url: URL
    public let backend: StateKind
    /// The workspace's database, with `.postgres`.
    public let databaseURL: String?

    /// A workspace whose state is SQLite in `./state`.
    public convenience init(sourcesYml: String? = nil) throws {
        try self.init(sourcesYml: sourcesYml, backend: .sqlite, databaseURL: nil)
    }

    /// A workspace whose state is `state`: with `.postgres`, a database of its own.
    public convenience init(sourcesYml: String? = nil, state: StateKind) async throws {
        try self.init(sourcesYml: sourcesYml, backend: state,
                      databaseURL: state == .postgres ? try await PostgresTestServer.createDatabase() : nil)
    }

    private init(sourcesYml: String?, backend: StateKind, databaseURL: String?) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        self.backend = backend
        self.databaseURL = databaseURL
        if let sourcesYml { try write("Sources.yml", sourcesYml) }
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
        if let databaseURL { PostgresTestServer.dropDatabaseLater(databaseURL) }
    }

    /// The arguments that point `aggregate` at this workspace's state.
    public var stateArguments: [String] {
        databaseURL.map { ["--state", $0] } ?? Self.stateArguments
    }

    public func write(_ name: String, _ text: String) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }

    /// The text of a file in the workspace.
    public func read(_ name: String) throws -> String {
        try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
    }

    /// Runs `aggregate` here exactly as given.
    public func aggregate(_ arguments: String..., environment: [String: String] = [:]) async throws -> Binary.Run {
        try await aggregate(arguments: arguments, environment: environment)
    }

    /// ``aggregate(_:environment:)`` with the arguments as a list.
    public func aggregate(arguments: [String], environment: [String: String] = [:], stdin: String? = nil) async throws -> Binary.Run {
        try await Binary.aggregate.run(arguments, in: url, environment: environment, stdin: stdin)
    }

    /// Runs `aggregate` here with this workspace's state, so runs of one test share a cache
    /// and tests never share one.
    public func run(_ arguments: String..., environment: [String: String] = [:]) async throws -> Binary.Run {
        try await run(arguments: arguments, environment: environment)
    }

    /// ``run(_:environment:)`` with the arguments as a list.
    public func run(arguments: [String], environment: [String: String] = [:], stdin: String? = nil) async throws -> Binary.Run {
        try await Binary.aggregate.run(arguments + stateArguments, in: url, environment: environment, stdin: stdin)
    }

    /// `--state-dir state`: the workspace's own state directory.
    public static let stateArguments = ["--state-dir", "state"]

    /// The shipped Sources.yml, read from the package checkout this test was built from.
    public static var shippedSourcesYml: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("Sources.yml"), encoding: .utf8)
        }
    }
}
