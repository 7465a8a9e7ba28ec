import FeedCore
import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

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
    /// swift-subprocess starts it with only stdin (empty), stdout and stderr open, a clean
    /// signal mask and default signal handlers, in a process group of its own: a kill of
    /// that group reaches everything it started.
    func run(cursor: String?) async throws -> Run {
        guard let program = command.first else { throw SourceError.failed("its command is empty") }
        if !program.contains("/"),
           ExecCommandCheck.problem(program, directory: directory, environment: ProcessInfo.processInfo.environment) != nil {
            throw SourceError.failed("\(program) is not on PATH; install it or give its path")
        }
        var options = PlatformOptions()
        options.processGroupID = 0
        // A cancelled run (Ctrl-C, the source's deadline) ends the whole group too.
        options.teardownSequence = [.send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .zero)]
        var environment: [Environment.Key: String] = [:]
        for (name, value) in processEnvironment(cursor: cursor) {
            if let key = Environment.Key(rawValue: name) { environment[key] = value }
        }
        let limits = (stdout: maxOutput, stderr: 1 << 20)
        let timeout = timeout
        let result: ExecutionResult<Outcome, SequenceOutput, SequenceOutput>
        do {
            result = try await Subprocess.run(
                executable(program),
                arguments: Arguments(Array(command.dropFirst())),
                environment: .custom(environment),
                workingDirectory: FilePath(directory.path),
                platformOptions: options,
                input: .none, output: .sequence, error: .sequence
            ) { execution in
                await withTaskGroup(of: Step.self) { group in
                    group.addTask { .stdout(await Self.read(execution.standardOutput, limit: limits.stdout)) }
                    group.addTask { .stderr(await Self.read(execution.standardError, limit: limits.stderr)) }
                    group.addTask {
                        try? await Task.sleep(for: .seconds(timeout))
                        return Task.isCancelled ? .cancelled : .timedOut
                    }
                    var outcome = Outcome()
                    var open = 2
                    while open > 0, let step = await group.next() {
                        switch step {
                        case .stdout(let output):
                            outcome.stdout = output
                            open -= 1
                            // Too much output: stop the program rather than read on.
                            if output.overLimit { try? execution.send(signal: .kill, toProcessGroup: true) }
                        case .stderr(let output):
                            outcome.stderr = output
                            open -= 1
                        case .timedOut:
                            outcome.timedOut = true
                            try? execution.send(signal: .kill, toProcessGroup: true)
                        case .cancelled:
                            break
                        }
                    }
                    group.cancelAll()
                    return outcome
                }
            }
        } catch let error as SubprocessError where error.code == .executableNotFound {
            throw SourceError.failed("\(program) is not on PATH; install it or give its path")
        } catch {
            throw SourceError.failed("cannot start \(command.joined(separator: " ")): \(PlainWords.describe(error))")
        }
        let outcome = result.closureResult
        if outcome.stdout.overLimit {
            throw SourceError.failed("printed more than \(maxOutput / 1024 / 1024) MiB on stdout; stopped it")
        }
        if outcome.timedOut { throw SourceError.timeout(seconds: timeout) }
        let status: Int32 = switch result.terminationStatus {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
        return Run(status: status, stdout: outcome.stdout.data, stderrLines: Self.lines(outcome.stderr.data))
    }

    /// `program` as swift-subprocess finds it: a bare name on `PATH`, a path as it is, a
    /// relative path from the Sources.yml folder (where it runs).
    private func executable(_ program: String) -> Executable {
        guard program.contains("/") else { return .name(program) }
        if program.hasPrefix("/") { return .path(FilePath(program)) }
        return .path(FilePath(directory.appendingPathComponent(program).standardizedFileURL.path))
    }

    /// What the program printed, and whether time ran out.
    private struct Outcome: Sendable {
        var stdout = Output()
        var stderr = Output()
        var timedOut = false
    }

    private struct Output: Sendable {
        var data = Data()
        var overLimit = false
    }

    private enum Step: Sendable {
        case stdout(Output)
        case stderr(Output)
        case timedOut
        case cancelled
    }

    /// Reads `stream` to its end, keeping at most `limit` bytes (the rest is drained, so
    /// the program is never blocked on a full pipe).
    private static func read(_ stream: SubprocessOutputSequence, limit: Int) async -> Output {
        var output = Output()
        do {
            for try await buffer in stream {
                guard !output.overLimit else { continue }
                buffer.withUnsafeBytes { output.data.append(contentsOf: $0) }
                if output.data.count > limit {
                    output.overLimit = true
                    output.data = Data()
                }
            }
        } catch {
            // A read that fails ends the output where it is; the exit status says the rest.
        }
        return output
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

    static func lines(_ data: Data) -> [String] {
        String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    /// `text` with every configured `env:` value (the secrets) replaced.
    func redacted(_ text: String) -> String {
        environment.values.filter { $0.count >= 4 }.reduce(text) {
            $0.replacingOccurrences(of: $1, with: Redaction.placeholder)
        }
    }
}
