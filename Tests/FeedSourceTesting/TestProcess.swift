import Foundation
import Subprocess
import SystemPackage

/// Runs a program for a test (`aggregate`, psql, sqlite3, bash, Python, newsboat) so that
/// it cannot stall the test run:
///
/// - through swift-subprocess, as `aggregate` runs its own children (`ChildProcess`):
///   only stdin, stdout and stderr reach the program, and its exit is seen whatever it
///   leaves running (Foundation's `Process` learns of an exit through a socket the
///   program inherits, and a grandchild, or a child another test spawned at that moment,
///   can hold it open);
/// - its output goes through files: a pipe's reader waits for every process holding the
///   writing end, a server the program started among them;
/// - it is waited for without blocking a thread: the test process serves the fixtures on
///   Swift's cooperative pool, two threads on a two-core machine;
/// - it has a time limit: one that overruns gets SIGABRT (a Swift program prints where
///   each of its threads was), 20 seconds later SIGKILL with its process group, and the
///   test fails naming the command and what it printed, instead of the whole run waiting
///   for CI's deadline.
public enum TestProcess {
    /// How long a program may run unless its caller says otherwise: a hundred times what
    /// the longest ones take on a loaded two-core machine.
    public static let defaultTimeLimit: Duration = .seconds(300)

    /// A program that did not exit within its time limit and was stopped.
    public struct Overran: Error, CustomStringConvertible {
        public var command: [String]
        public var timeLimit: Duration
        /// What it wrote on stderr, its backtraces among it when it is a Swift program.
        public var stderr: String

        public var description: String {
            "\(command.joined(separator: " ")) did not exit within \(timeLimit) and was stopped; its stderr:\n\(stderr)"
        }
    }

    /// Runs `executable` with `arguments` and returns its status (the signal's number when
    /// one ended it, as Foundation says it) and output. `environment` nil inherits the
    /// test process's; `stdin` nil reads /dev/null.
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil,
                           environment: [String: String]? = nil, stdin: String? = nil,
                           timeLimit: Duration = defaultTimeLimit) async throws -> Binary.Run {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-test-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("stdout")
        let err = scratch.appendingPathComponent("stderr")
        var input = URL(fileURLWithPath: "/dev/null")
        if let stdin {
            input = scratch.appendingPathComponent("stdin")
            try Data(stdin.utf8).write(to: input)
        }
        // Each descriptor is closed by swift-subprocess once the program has it.
        let stdinDescriptor = try FileDescriptor.open(FilePath(input.path), .readOnly, options: [.closeOnExec])
        let stdoutDescriptor = try FileDescriptor.open(FilePath(out.path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                                       permissions: [.ownerReadWrite])
        let stderrDescriptor = try FileDescriptor.open(FilePath(err.path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                                                       permissions: [.ownerReadWrite])

        var options = PlatformOptions()
        options.processGroupID = 0
        // Run at cancellation: ours at the time limit, or the test's.
        options.teardownSequence = [
            .send(signal: Signal(rawValue: SIGABRT), allowedDurationToNextStep: .seconds(20)),
            .send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .seconds(5)),
        ]
        var variables: [Environment.Key: String] = [:]
        for (name, value) in environment ?? [:] {
            if let key = Environment.Key(rawValue: name) { variables[key] = value }
        }
        let configuration = Configuration(
            executable: .path(FilePath(executable.path)), arguments: Arguments(arguments),
            environment: environment == nil ? .inherit : .custom(variables),
            workingDirectory: directory.map { FilePath($0.path) }, platformOptions: options)

        let ending = await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                do {
                    let result = try await Subprocess.run(
                        configuration,
                        input: .fileDescriptor(stdinDescriptor, closeAfterSpawningProcess: true),
                        output: .fileDescriptor(stdoutDescriptor, closeAfterSpawningProcess: true),
                        error: .fileDescriptor(stderrDescriptor, closeAfterSpawningProcess: true))
                    return switch result.terminationStatus {
                    case .exited(let code): .exited(code)
                    case .signaled(let signal): .exited(signal)
                    }
                } catch {
                    return .failed(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeLimit)
                return .overran
            }
            // The first to end decides; the other is cancelled (a program past its time
            // goes through the teardown above) and waited for.
            let first = await group.next() ?? .overran
            group.cancelAll()
            return first
        }
        let text = { (file: URL) in String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self) }
        switch ending {
        case .exited(let status):
            return Binary.Run(status: status, stdout: text(out), stderr: text(err))
        case .failed(let error):
            throw error
        case .overran:
            throw Overran(command: [executable.path] + arguments, timeLimit: timeLimit, stderr: text(err))
        }
    }

    private enum Ending: Sendable {
        case exited(Int32)
        case failed(any Error)
        case overran
    }
}

extension Process {
    /// Starts the process now; the returned stream finishes when it exits. For what a
    /// test starts in the background and stops itself (`serve`, a run it kills).
    public func start() throws -> AsyncStream<Void> {
        let (exited, finish) = AsyncStream.makeStream(of: Void.self)
        terminationHandler = { _ in finish.finish() }
        try run()
        return exited
    }

    /// Whether the process exits within `limit` (`exited` is what ``start()`` returned).
    /// False also when the waiting task is cancelled. The process is left as it is.
    public func exits(_ exited: AsyncStream<Void>, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in exited {} }
            group.addTask { try? await Task.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
        // The stream ends with the process, or at once when an earlier wait on it was cut
        // short: then the process's own state tells (Foundation clears it before it calls
        // the termination handler), looked at until the deadline.
        while isRunning, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return !isRunning
    }

    /// Waits for the process to exit, at most `limit`; one still running then gets
    /// SIGABRT (a Swift program's backtraces go to its stderr), 20 seconds later SIGKILL
    /// with its process group, and the answer is false.
    public func awaitExit(_ exited: AsyncStream<Void>, within limit: Duration = TestProcess.defaultTimeLimit) async -> Bool {
        if await exits(exited, within: limit) { return true }
        kill(processIdentifier, SIGABRT)
        if await exits(exited, within: .seconds(20)) { return false }
        // Foundation starts each child in a process group of its own.
        kill(-processIdentifier, SIGKILL)
        _ = await exits(exited, within: .seconds(5))
        return false
    }

    /// Sends SIGTERM and waits for `exited` at most `seconds`; a process still running then
    /// is killed, and the answer is false (a hung shutdown fails its test, not the test run).
    public func terminate(awaiting exited: AsyncStream<Void>, seconds: Int = 30) async -> Bool {
        terminate()
        let stopped = await exits(exited, within: .seconds(seconds))
        if !stopped { kill(processIdentifier, SIGKILL) }
        return stopped
    }
}
