import FeedState
import Foundation
import PostgresNIO

/// Who refreshes which source among `serve` replicas sharing one PostgreSQL state: a row
/// per source naming its holder and until when, by the server's clock (so replicas'
/// clocks need not agree). A replica takes a source's lease when it is free or expired,
/// and renews its own; a replica that dies loses its leases when they expire.
public struct PostgresRefreshLeases: Sendable {
    let database: PostgresStateDatabase

    public init(_ database: PostgresStateDatabase) {
        self.database = database
    }

    static let schema = PostgresSchema(component: "refresh leases", migrations: [
        .init("1: refresh leases", [
            "CREATE TABLE refresh_lease (source text PRIMARY KEY, holder text NOT NULL, until double precision NOT NULL)",
        ]),
    ])

    /// Takes or renews `source`'s lease for `seconds`; false while another holder has it.
    public func take(source: String, holder: String, seconds: Double) async throws(PostgresStateError) -> Bool {
        try await database.migrate(Self.schema)
        let rows = try await database.query("""
            INSERT INTO refresh_lease (source, holder, until)
            VALUES (\(source), \(holder), extract(epoch from clock_timestamp()) + \(seconds))
            ON CONFLICT (source) DO UPDATE SET holder = excluded.holder, until = excluded.until
            WHERE refresh_lease.holder = excluded.holder OR refresh_lease.until < extract(epoch from clock_timestamp())
            RETURNING holder
            """)
        return !rows.isEmpty
    }
}
