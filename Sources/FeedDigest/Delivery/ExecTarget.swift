import FeedCore
import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// `{exec: [sendmail, -t]}`: the report on the program's stdin; argv, no shell; killed
/// with its process group at `timeout`. It gets `AGGREGATE_DIGEST` and
/// `AGGREGATE_IDEMPOTENCY_KEY` (the same for every retry of one report) in its environment;
/// exit status 0 is delivered, anything else is tried again next run.
struct ExecTarget: DeliveryTarget {
    let key: String
    let name: String
    let command: [String]
    let timeout: Double
    let digest: String

    func payload(for report: DigestReport, text: String) -> DeliveryPayload {
        DeliveryPayload(body: text)
    }

    func deliver(_ payload: DeliveryPayload, reportID: String) async throws(DeliveryFailure) {
        guard let program = command.first else { throw .permanent("the command is empty") }
        var inherited = ProcessInfo.processInfo.environment
        inherited["AGGREGATE_DIGEST"] = digest
        inherited["AGGREGATE_IDEMPOTENCY_KEY"] = reportID
        let variables = inherited
        // The report reaches stdin from an unlinked temporary file, not a pipe: a program
        // that exits without reading it (or reads half) is no write error of ours.
        let input: FileDescriptor
        do {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-report-\(UUID().uuidString)").path
            try Data(payload.body.utf8).write(to: URL(fileURLWithPath: path))
            input = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
            try? FileManager.default.removeItem(atPath: path)
        } catch {
            throw .temporary("cannot stage the report for \(program): \(PlainWords.describe(error))")
        }
        enum Step: Sendable {
            case finished(TerminationStatus, String?)
            case timedOut
        }
        let step: Step
        do {
            step = try await withThrowingTaskGroup(of: Step.self) { group in
                group.addTask {
                    var options = PlatformOptions()
                    options.processGroupID = 0
                    // Cancelled (the timeout), the program's whole process group is killed.
                    options.teardownSequence = [.send(signal: .kill, toProcessGroup: true, allowedDurationToNextStep: .zero)]
                    var environment: [Environment.Key: String] = [:]
                    for (name, value) in variables {
                        if let key = Environment.Key(rawValue: name) { environment[key] = value }
                    }
                    let result = try await Subprocess.run(
                        program.contains("/") ? .path(FilePath(program)) : .name(program),
                        arguments: Arguments(Array(command.dropFirst())),
                        environment: .custom(environment),
                        platformOptions: options,
                        input: .fileDescriptor(input, closeAfterSpawningProcess: true), output: .discarded, error: .string(limit: 64 * 1024))
                    return .finished(result.terminationStatus, result.standardError)
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    return .timedOut
                }
                // The first to end wins; cancelling the run kills the program's process group.
                let first = try await group.next() ?? .timedOut
                group.cancelAll()
                return first
            }
        } catch let error as SubprocessError where error.code == .executableNotFound {
            throw .permanent("\(program) is not on PATH; install it or give its path")
        } catch {
            throw .temporary("cannot run \(command.joined(separator: " ")): \(PlainWords.describe(error))")
        }
        switch step {
        case .timedOut:
            throw .temporary("took longer than \(SecondsFormat.text(timeout)); stopped it")
        case .finished(let status, let stderr):
            let firstLine = stderr?.split(whereSeparator: \.isNewline).first.map { ": \($0)" } ?? ""
            switch status {
            case .exited(0): return
            case .exited(let code): throw .temporary("exited with status \(code)\(firstLine)")
            case .signaled(let signal): throw .temporary("killed by signal \(signal)\(firstLine)")
            }
        }
    }
}
