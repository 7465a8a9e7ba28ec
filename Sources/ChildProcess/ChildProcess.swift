import FeedCore
import FeedSupport
import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// How `aggregate` runs another program, the one way for the `exec` source plugin and the
/// `exec` delivery target: argv without a shell, through swift-subprocess (only stdin,
/// stdout and stderr open, a clean signal mask, default signal handlers), in a process
/// group of its own that is killed whole at the timeout or when the run is cancelled.
public struct ChildProcess: Sendable {
    /// argv; `command[0]` is looked up on `PATH` unless it contains a `/`.
    public var command: [String]
    /// The program's whole environment.
    public var environment: [String: String]
    /// Where it runs, and what a relative program path is resolved from; nil: ours.
    public var directory: URL?
    /// What the program reads on stdin; nil: nothing (stdin at its end).
    public var input: Data?
    /// Killed with its process group after this long.
    public var timeout: Double
    /// At most this much of stdout is kept; more kills the program. nil: stdout is read
    /// and dropped.
    public var stdoutLimit: Int?
    /// At most this much of stderr is kept; the rest is read and dropped.
    public var stderrLimit: Int

    public init(command: [String], environment: [String: String], directory: URL? = nil, input: Data? = nil, timeout: Double,
                stdoutLimit: Int? = nil, stderrLimit: Int = 64 * 1024) {
        self.command = command
        self.environment = environment
        self.directory = directory
        self.input = input
        self.timeout = timeout
        self.stdoutLimit = stdoutLimit
        self.stderrLimit = stderrLimit
    }

    /// How a run ended.
    public struct Result: Sendable {
        /// The exit status, or 128 + the signal that killed it (as a shell says it).
        public var status: Int32
        /// Killed by a signal rather than exiting.
        public var signaled: Bool
        public var stdout: Data
        public var stderr: Data
        /// Killed at the timeout.
        public var timedOut: Bool
        /// Killed for printing more than `stdoutLimit`.
        public var stdoutOverLimit: Bool

        /// The non-blank lines of stderr.
        public var stderrLines: [String] { ChildProcess.lines(stderr) }
    }

    /// Why a program could not be run at all.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The command is empty.
        case emptyCommand
        /// `command[0]` is not on `PATH` (or not at its path).
        case notFound(String)
        /// It could not be started, or its input staged; in plain words.
        case cannotStart(String)

        public var description: String {
            switch self {
            case .emptyCommand: "the command is empty"
            case .notFound(let program): "\(program) is not on PATH; install it or give its path"
            case .cannotStart(let reason): reason
            }
        }
    }

    /// The non-blank lines of what a program printed.
    public static func lines(_ output: Data) -> [String] {
        String(decoding: output, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    /// Runs the program to its end, its timeout, or a cancellation (which kills its group).
    public func run() async throws(Failure) -> Result {
        guard let program = command.first else { throw .emptyCommand }
        var options = PlatformOptions()
        options.processGroupID = 0
        options.teardownSequence = [.send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .zero)]
        var variables: [Environment.Key: String] = [:]
        for (name, value) in environment {
            if let key = Environment.Key(rawValue: name) { variables[key] = value }
        }
        let stdin = try stagedInput(program: program)
        let limits = (stdout: stdoutLimit, stderr: stderrLimit)
        let timeout = timeout
        let result: ExecutionResult<Outcome, SequenceOutput, SequenceOutput>
        do {
            result = try await Subprocess.run(
                executable(program), arguments: Arguments(Array(command.dropFirst())), environment: .custom(variables),
                workingDirectory: directory.map { FilePath($0.path) }, platformOptions: options,
                input: .fileDescriptor(stdin, closeAfterSpawningProcess: true),
                output: .sequence, error: .sequence
            ) { execution in
                await withTaskGroup(of: Step.self) { group in
                    group.addTask { .stdout(await Self.read(execution.standardOutput, limit: limits.stdout)) }
                    group.addTask { .stderr(await Self.read(execution.standardError, limit: limits.stderr, dropsOverflow: true)) }
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
            throw .notFound(program)
        } catch {
            throw .cannotStart("cannot start \(command.joined(separator: " ")): \(PlainWords.describe(error))")
        }
        let outcome = result.closureResult
        let (status, signaled): (Int32, Bool) = switch result.terminationStatus {
        case .exited(let code): (code, false)
        case .signaled(let signal): (128 + signal, true)
        }
        return Result(status: status, signaled: signaled, stdout: outcome.stdout.data, stderr: outcome.stderr.data,
                      timedOut: outcome.timedOut, stdoutOverLimit: outcome.stdout.overLimit)
    }

    /// `input` on stdin from an unlinked temporary file, not a pipe: a program that exits
    /// without reading it (or reads half) is no write error of ours. Without input, stdin
    /// is `/dev/null`.
    private func stagedInput(program: String) throws(Failure) -> FileDescriptor {
        do {
            guard let input else { return try FileDescriptor.open("/dev/null", .readOnly, options: [.closeOnExec]) }
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-input-\(UUID().uuidString)").path
            try input.write(to: URL(fileURLWithPath: path))
            let descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
            try? FileManager.default.removeItem(atPath: path)
            return descriptor
        } catch {
            throw .cannotStart("cannot stage the input of \(program): \(PlainWords.describe(error))")
        }
    }

    /// `program` as swift-subprocess finds it: a bare name on `PATH`, a path as it is, a
    /// relative path from ``directory`` (where it runs).
    private func executable(_ program: String) -> Executable {
        guard program.contains("/") else { return .name(program) }
        if program.hasPrefix("/") { return .path(FilePath(program)) }
        guard let directory else { return .path(FilePath(program)) }
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

    /// Reads `stream` to its end (so the program is never blocked on a full pipe), keeping
    /// at most `limit` bytes (nil: none). Past the limit the output is over it and emptied,
    /// or with `dropsOverflow` cut at the limit.
    private static func read(_ stream: SubprocessOutputSequence, limit: Int?, dropsOverflow: Bool = false) async -> Output {
        var output = Output()
        do {
            for try await buffer in stream {
                guard let limit, !output.overLimit else { continue }
                buffer.withUnsafeBytes { output.data.append(contentsOf: $0) }
                if output.data.count > limit {
                    if dropsOverflow {
                        output.data = output.data.prefix(limit)
                    } else {
                        output.data = Data()
                    }
                    output.overLimit = true
                }
            }
        } catch {
            // A read that fails ends the output where it is; the exit status says the rest.
        }
        return output
    }
}
