import ChildProcess
import FeedCore
import Foundation

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
        var environment = ProcessInfo.processInfo.environment
        environment["AGGREGATE_DIGEST"] = digest
        environment["AGGREGATE_IDEMPOTENCY_KEY"] = reportID
        let child = ChildProcess(command: command, environment: environment, input: Data(payload.body.utf8), timeout: timeout)
        let result: ChildProcess.Result
        do {
            result = try await child.run()
        } catch {
            switch error {
            case .emptyCommand, .notFound: throw .permanent(error.description)
            case .cannotStart(let reason): throw .temporary(reason)
            }
        }
        if result.timedOut { throw .temporary("took longer than \(SecondsFormat.text(timeout)); stopped it") }
        let firstLine = result.stderrLines.first.map { ": \($0)" } ?? ""
        guard result.status != 0 || result.signaled else { return }
        if result.signaled { throw .temporary("killed by signal \(result.status - 128)\(firstLine)") }
        throw .temporary("exited with status \(result.status)\(firstLine)")
    }
}
