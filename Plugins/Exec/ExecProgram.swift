import ChildProcess
import FeedCore
import FeedSupport
import Foundation

/// The program of a `plugin: exec` source and how one page of it is run: argv without a
/// shell, in the Sources.yml folder, with the configured environment and the page's
/// cursor; killed with its whole process group at the source's `timeout`.
struct ExecProgram: Sendable {
    /// argv; `command[0]` is looked up on `PATH` unless it contains a `/`.
    var command: [String]
    /// The configured `env:` after `${VAR}` expansion. Values are secrets.
    var environment: [String: String]
    var directory: URL
    var sourceID: String
    /// `url:` when the entry has an http(s) one, handed over as `AGGREGATE_URL`.
    var url: URL?
    var timeout: Double
    /// More stdout than this fails the page (the same cap as an HTTP body).
    var maxOutput = 20 * 1024 * 1024

    /// What one run printed.
    struct Run: Sendable {
        var status: Int32
        var stdout: Data
        var stderrLines: [String]
    }

    /// Runs the program for the page after `cursor`. Throws ``SourceError/timeout(seconds:)``
    /// when it is killed at `timeout`, and ``SourceError/failed(_:)`` when it cannot start
    /// or prints more than `maxOutput`.
    ///
    /// Started by ``ChildProcess``: stdin empty, in a process group of its own, so a kill
    /// of that group reaches everything it started.
    func run(cursor: String?) async throws -> Run {
        guard let program = command.first else { throw SourceError.failed("its command is empty") }
        if !program.contains("/"),
           ExecCommandCheck.problem(program, directory: directory, environment: ProcessInfo.processInfo.environment) != nil {
            throw SourceError.failed("\(program) is not on PATH; install it or give its path")
        }
        let child = ChildProcess(command: command, environment: processEnvironment(cursor: cursor), directory: directory,
                                 timeout: timeout, stdoutLimit: maxOutput, stderrLimit: 1 << 20)
        let result: ChildProcess.Result
        do {
            result = try await child.run()
        } catch {
            throw SourceError.failed(error.description)
        }
        if result.stdoutOverLimit {
            throw SourceError.failed("printed more than \(maxOutput / 1024 / 1024) MiB on stdout; stopped it")
        }
        if result.timedOut { throw SourceError.timeout(seconds: timeout) }
        return Run(status: result.status, stdout: result.stdout, stderrLines: result.stderrLines)
    }

    /// The environment the program sees: ours, the configured `env:`, and the protocol's
    /// `AGGREGATE_*` variables (a stale `AGGREGATE_CURSOR` of our own is never passed on).
    func processEnvironment(cursor: String?) -> [String: String] {
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, configured in configured }
        variables["AGGREGATE_SOURCE"] = sourceID
        variables["AGGREGATE_CURSOR"] = cursor
        variables["AGGREGATE_URL"] = url?.absoluteString
        return variables
    }

    /// `text` with every configured `env:` value (the secrets) replaced.
    func redacted(_ text: String) -> String {
        environment.values.filter { $0.count >= 4 }.reduce(text) {
            $0.replacingOccurrences(of: $1, with: Redaction.placeholder)
        }
    }
}
