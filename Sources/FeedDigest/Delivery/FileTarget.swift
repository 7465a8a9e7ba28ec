import FeedConfig
import FeedCore
import FeedSupport
import Foundation

/// `{file: PATH}`, and `--output PATH`: the report written to a file by ``DigestOutput``'s
/// rules (a temporary file renamed over it), so a retry of the same report leaves the same
/// file. The file holds one report, so when several are owed one is written per run,
/// oldest first.
struct FileTarget: DeliveryTarget {
    let key: String
    let name: String
    let path: String

    /// The file target of PATH as `--output PATH` makes it: stored under the same key as
    /// `{file: PATH}`, so a digest moved from one to the other still owes what it owed.
    init(path: String) {
        let config = DeliveryTargetConfig(.file(path: path))
        self.init(key: config.writtenKey, name: config.name, path: path)
    }

    init(key: String, name: String, path: String) {
        self.key = key
        self.name = name
        self.path = path
    }

    /// The key reports owed to the file at PATH are stored under.
    static func key(path: String) -> String {
        FileTarget(path: path).key
    }

    /// The file a stored key names (keys are ours: `file PATH`), so a report owed to a file
    /// that is no longer configured is still written there, never dropped.
    static func path(ofKey key: String) -> String? {
        key.hasPrefix(prefix) ? String(key.dropFirst(prefix.count)) : nil
    }

    private static let prefix = "file "

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
