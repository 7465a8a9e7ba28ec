import FeedCore
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
    func run(cursor: String?) async throws -> Run {
        if let program = command.first, !program.contains("/"),
           ExecCommandCheck.problem(program, directory: directory, environment: ProcessInfo.processInfo.environment) != nil {
            throw SourceError.failed("\(program) is not on PATH; install it or give its path")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--"] + command
        process.currentDirectoryURL = directory
        process.environment = processEnvironment(cursor: cursor)
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { finished in
            exited.continuation.yield(finished.terminationStatus)
            exited.continuation.finish()
        }
        do {
            try process.run()
        } catch {
            throw SourceError.failed("cannot start \(command.joined(separator: " ")): \(PlainWords.describe(error))")
        }
        // Foundation starts the child in its own process group, so one kill reaches
        // everything it spawned.
        let group = process.processIdentifier
        let alarm = Alarm(group: group)
        let killer = Task {
            try await Task.sleep(for: .seconds(timeout))
            alarm.ring()
        }
        async let out = Self.readAll(stdout.fileHandleForReading, limit: maxOutput) { alarm.stop() }
        async let err = Self.readAll(stderr.fileHandleForReading, limit: 1024 * 1024) { alarm.stop() }
        let (output, errors) = await (out, err)
        var status: Int32 = -1
        for await code in exited.stream { status = code }
        let timedOut = alarm.finish()
        killer.cancel()
        if output.overLimit {
            throw SourceError.failed("printed more than \(maxOutput / 1024 / 1024) MiB on stdout; stopped it")
        }
        if timedOut { throw SourceError.timeout(seconds: timeout) }
        return Run(status: status, stdout: output.data, stderrLines: Self.lines(errors.data))
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

    /// Reads `handle` to its end on a thread of its own (a pipe read blocks), calling
    /// `overflow` once past `limit` bytes and draining the rest.
    private static func readAll(_ handle: FileHandle, limit: Int, overflow: @escaping @Sendable () -> Void) async
        -> (data: Data, overLimit: Bool)
    {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var data = Data()
                var overLimit = false
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    if overLimit { continue }
                    data.append(chunk)
                    if data.count > limit {
                        overLimit = true
                        data = Data()
                        overflow()
                    }
                }
                continuation.resume(returning: (data, overLimit))
            }
        }
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

/// Kills a program's process group at most once, and only while it runs, and remembers
/// whether that was the timeout.
private final class Alarm: @unchecked Sendable {
    private let lock = NSLock()
    private let group: pid_t
    private var exited = false
    private var rang = false

    init(group: pid_t) {
        self.group = group
    }

    /// The timeout: kills the group unless the program has already exited.
    func ring() {
        lock.withLock {
            guard !exited, !rang else { return }
            rang = true
            kill(-group, SIGKILL)
        }
    }

    /// Too much output: kills the group without calling it a timeout.
    func stop() {
        lock.withLock {
            if !exited { kill(-group, SIGKILL) }
        }
    }

    /// The program has exited; returns whether the timeout killed it.
    func finish() -> Bool {
        lock.withLock {
            exited = true
            return rang
        }
    }
}
