import FeedConfig
import FeedCore
@testable import FeedDigest
import FeedEngine
import FeedSourceTesting
import FeedState
import FeedStatePostgres
import Foundation
import GRDB
import PostgresNIO
import Testing

/// `digest --output FILE` used to keep the file a run committed in a table of its own
/// (`digest_delivery`); it is now a `file` target's report in the outbox. A state written
/// by an earlier version, holding a file a killed run never wrote, still owes that file.
@Suite struct FileOutputMigrationTests {
    let created = Date(timeIntervalSince1970: 1_800_000_000.25)

    var expected: OutgoingReport {
        OutgoingReport(target: "file out/digest.md", reportID: "", created: created, payload: DeliveryPayload(body: "# daily\n\"é\"\n"))
    }

    @Test func keysNameTheirFile() {
        #expect(FileTarget.key(path: "out/digest.md") == "file out/digest.md")
        #expect(FileTarget.path(ofKey: FileTarget.key(path: "/tmp/a b.md")) == "/tmp/a b.md")
        #expect(FileTarget.path(ofKey: "webhook https://hooks.test/x") == nil)
    }

    @Test func sqliteMovesAnUnfinishedFileIntoTheOutbox() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The state as the previous version left it: migrated up to v4, one file owed.
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("state.sqlite").path)
        try SQLiteDigestStore.schema.migrator.migrate(queue, upTo: "v4: alerts and delivery targets")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO digest_delivery (digest, path, text, created) VALUES ('daily', 'out/digest.md', ?, ?)",
                           arguments: ["# daily\n\"é\"\n", created.timeIntervalSince1970])
        }
        try queue.close()

        let state = try await EngineState.open(.directory(directory), connections: .one)
        let store = try #require(state.digestStore)
        try await expectOneReportOwed(store)
    }

    @Test(.enabled(if: PostgresTestServer.isAvailable)) func postgresMovesAnUnfinishedFileIntoTheOutbox() async throws {
        let url = try await PostgresTestServer.createDatabase()
        defer { PostgresTestServer.dropDatabaseLater(url) }
        let location = try StateLocation(parsing: url)
        // The state as the previous version left it: migrated up to 3, one file owed.
        let old = try await EngineState.open(location)
        let database = try #require((old.backend as? PostgresState)?.database)
        let previous = PostgresSchema(component: PostgresDigestStore.schema.component,
                                      migrations: Array(PostgresDigestStore.schema.migrations.prefix(3)))
        try await database.migrate(previous)
        _ = try await database.query("""
            INSERT INTO digest_delivery (digest, path, text, created)
            VALUES ('daily', 'out/digest.md', \("# daily\n\"é\"\n"), \(created.timeIntervalSince1970))
            """)
        await old.close()

        let state = try await EngineState.open(location)
        do {
            try await expectOneReportOwed(try #require(state.digestStore))
            await state.close()
        } catch {
            await state.close()
            throw error
        }
    }

    /// The report is owed to the file's target once, with the text and time it was
    /// committed with, and a report id of its own; delivered, it is gone.
    func expectOneReportOwed(_ store: any DigestStore) async throws {
        let owed = try await store.owed(by: "daily")
        #expect(owed.count == 1)
        let report = try #require(owed.first)
        var withoutID = report
        withoutID.reportID = ""
        #expect(withoutID == expected)
        #expect(!report.reportID.isEmpty)
        try await store.delivered(report, digest: "daily")
        #expect(try await store.owed(by: "daily").isEmpty)
    }
}
