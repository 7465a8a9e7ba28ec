import FeedCore
import FeedSupport
import Foundation

/// `{file: PATH}`: the report written to a file as `--output` writes it (a temporary file
/// renamed over it), so a retry of the same report leaves the same file. The file holds
/// one report, so when several are owed one is written per run, oldest first.
struct FileTarget: DeliveryTarget {
    let key: String
    let name: String
    let path: String

    var holdsOneReport: Bool { true }

    func payload(for report: DigestReport, text: String) -> DeliveryPayload {
        DeliveryPayload(body: text)
    }

    func deliver(_ payload: DeliveryPayload, reportID: String) async throws(DeliveryFailure) {
        do {
            try DigestOutput.writeFile(payload.body, to: path)
        } catch {
            throw .temporary((error as? DigestJob.Failure)?.description ?? PlainWords.describe(error))
        }
    }
}
