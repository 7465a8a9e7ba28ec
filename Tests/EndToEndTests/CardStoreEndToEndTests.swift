import FeedCore
import FeedSourceTesting
import FeedSupport
import FixtureServer
import Foundation
import Testing

/// The card store through the built binary against the fixture server: `refresh` records,
/// `--stored` and `history` read, a dropped card stays with `gone_since`, fallbacks move
/// nothing, `--no-record` and `record: false` keep the store out of a run.
@Suite struct CardStoreEndToEndTests {
    static func mug(_ price: Decimal) -> DataEdit {
        .set(list: "products", key: "code", match: "MUG", field: "price", value: .number(price))
    }

    static let noVoucher = DataEdit.remove(list: "products", key: "code", match: "VOUCHER")

    /// The JSON objects of a run's stdout.
    func objects(_ run: Binary.Run) -> [[String: JSONValue]] {
        run.stdoutLines.compactMap { line in
            guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else { return nil }
            return members
        }
    }

    @Test(arguments: StateKind.all) func droppedCardsStayGoneAndPriceChangesAreHistory(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), state: state) { session in
            let first = try await session.run("refresh")
            #expect(first.status == 0 && first.stdout == "" && first.stderr == "", "\(first.stderr)")
            session.server.control.edit("cabify", Self.mug(6))
            #expect(try await session.run("refresh", "--refresh").status == 0)
            session.server.control.edit("cabify", Self.mug(6), Self.noVoucher)
            #expect(try await session.run("refresh", "--refresh").status == 0)
            session.server.control.edit("cabify", Self.mug(9), Self.noVoucher)
            #expect(try await session.run("refresh", "--refresh").status == 0)

            let stored = try await session.run("--stored", "--all", "--format", "jsonl")
            #expect(stored.status == 0 && stored.stderr == "", "\(stored.stderr)")
            let cards = objects(stored)
            // Listed cards in the source's order, then the gone one.
            #expect(cards.map { $0["id"] } == ["cabify:TSHIRT", "cabify:MUG", "cabify:VOUCHER"])
            #expect(cards.map { $0["gone_since"] != nil } == [false, false, true])
            #expect(cards.allSatisfy { $0["first_seen"] != nil && $0["last_seen"] != nil })
            let voucher = try #require(cards.last)
            if case .string(let gone)? = voucher["gone_since"], case .string(let seen)? = voucher["last_seen"] {
                #expect(gone >= seen)
            } else {
                Issue.record("the gone card has no gone_since or last_seen: \(voucher)")
            }
            #expect(cards[1]["price"] == ["amount": 9, "currency": "EUR"])

            let history = try await session.run("history", "cabify:MUG", "--format", "jsonl")
            #expect(history.status == 0)
            let changes = objects(history)
            #expect(changes.map { [$0["id"], $0["field"], $0["before"], $0["after"]] } == [
                ["cabify:MUG", "price", ["amount": .number(Decimal(string: "7.5")!), "currency": "EUR"], ["amount": 6, "currency": "EUR"]],
                ["cabify:MUG", "price", ["amount": 6, "currency": "EUR"], ["amount": 9, "currency": "EUR"]],
            ])
            #expect(changes.allSatisfy { $0.keys.sorted() == ["after", "at", "before", "field", "id"] })
            let text = try await session.run("history", "cabify:MUG", "--format", "text")
            #expect(text.stdoutLines.dropFirst().map { String($0.dropFirst(22)) } == ["price  €7.50 → €6.00", "price  €6.00 → €9.00"])
            #expect(text.stdoutLines.first?.hasPrefix("Cabify Coffee Mug (cabify:MUG), first seen 20") == true)

            let missing = try await session.run("history", "cabify:NOPE")
            #expect(missing.status == 1)
            #expect(missing.stderrLines == ["aggregate: no card cabify:NOPE in the card store; `aggregate --stored --all` lists the cards it keeps, `aggregate refresh` records what the sources list"])

            let summary = try await session.run("store")
            let table = summary.stdoutLines.map { $0.split(separator: " ").map(String.init) }
            #expect(table.first == ["source", "cards", "gone", "history", "bytes"])
            #expect(table.count == 2 && table[1].prefix(4) == ["cabify", "3", "1", "2"] && table[1].last == "B", "\(summary.stdout)")
        }
    }

    /// The daily run with a cold cache (its folder removed, or an upstream without
    /// validators): the same bytes fetched again name the listing the store merged last, so
    /// no card is written — the source's counter stays, only its listing time moves — and
    /// a changed body is merged as ever.
    @Test func theSameBytesFetchedIntoAColdCacheWriteNoCard() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let state = session.workspace.url.appendingPathComponent("state")
            func sql(_ query: String) async throws -> String {
                try await Binary(name: "sqlite3").run([state.appendingPathComponent("cards.sqlite").path, query],
                                                      in: session.workspace.url, absolute: "/usr/bin/sqlite3").stdout
            }
            let first = try await session.run("--all", "--format", "jsonl")
            #expect(first.status == 0 && first.stdoutLines.count == 3, "\(first.stderr)")
            let recorded = try await sql("SELECT version, listing_tag, listed_at FROM card_source_version")
            let rows = try await sql("SELECT id, card, last_seen FROM card ORDER BY id")
            try await Task.sleep(for: .milliseconds(1100))
            for name in ["cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm", "bodies"] {
                try? FileManager.default.removeItem(at: state.appendingPathComponent(name))
            }
            let daily = try await session.run("--all", "--format", "jsonl")
            #expect(daily.stdout == first.stdout)
            #expect(try await sql("SELECT id, card, last_seen FROM card ORDER BY id") == rows)
            let seen = try await sql("SELECT version, listing_tag, listed_at FROM card_source_version")
            #expect(seen.split(separator: "|").prefix(2) == recorded.split(separator: "|").prefix(2))
            #expect(seen != recorded, "the listing time moves")
            session.server.control.edit("cabify", Self.mug(6))
            #expect(try await session.run("--all", "--refresh", "--format", "jsonl").status == 0)
            #expect(try await sql("SELECT version FROM card_source_version") != recorded.split(separator: "|").first.map { "\($0)\n" })
            #expect(try await sql("SELECT id || ' ' || field FROM card_change") == "cabify:MUG price\n")
        }
    }

    /// `--stored` on PostgreSQL gives the same ids in the same order as on SQLite, through
    /// the built binary, for every sort, direction, view and page: the same recording and
    /// the same marks on each.
    @Test(.enabled(if: PostgresTestServer.isAvailable, "\(PostgresTestServer.skipReason)"))
    func postgresAndSQLiteGiveTheSamePages() async throws {
        func pages(_ state: StateKind) async throws -> [String] {
            try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify", "target", "dishwashers"), state: state) { session in
                #expect(try await session.run("refresh").status == 0)
                let all = objects(try await session.run("--stored", "--all", "--format", "jsonl")).compactMap { $0["id"]?.stringValue }
                #expect(all.count > 20, "\(all)")
                #expect(try await session.workspace.run(arguments: ["mark", "read"] + stride(from: 1, to: all.count, by: 3).map { all[$0] }).status == 0)
                #expect(try await session.workspace.run(arguments: ["mark", "star"] + stride(from: 2, to: all.count, by: 5).map { all[$0] }).status == 0)
                var seen: [String] = []
                for view in [["--stored"], ["--unread"], ["--starred"]] {
                    for sort in ["feed", "price", "date", "title"] {
                        for order in ["asc", "desc"] {
                            for paging in [["--all"], ["--page", "2", "--per-page", "7"]] {
                                let arguments = view + ["--sort", sort, "--order", order] + paging + ["--format", "jsonl"]
                                let run = try await session.workspace.run(arguments: arguments)
                                let ids = objects(run).compactMap { $0["id"]?.stringValue }
                                seen.append("\(arguments.joined(separator: " ")): \(ids.joined(separator: " "))")
                            }
                        }
                    }
                }
                return seen
            }
        }
        let sqlite = try await pages(.sqlite)
        let postgres = try await pages(.postgres)
        #expect(sqlite.count == 48 && postgres.count == 48)
        for (onSQLite, onPostgres) in zip(sqlite, postgres) { #expect(onSQLite == onPostgres) }
        #expect(sqlite.contains { $0.hasPrefix("--unread --sort date --order desc --all") && $0.split(separator: " ").count > 12 })
    }

    /// A refresh whose upstream answers 304 to what the store merged last reads no card:
    /// the cards are seen again, nothing else moves; a new body is merged as ever.
    @Test func aConfirmedListingIsSeenAgainWithoutReadingIt() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            session.server.control.set("cabify", [Fault(etag: "\"v1\"")])
            #expect(try await session.run("refresh").status == 0)
            let before = objects(try await session.run("--stored", "--all", "--format", "jsonl"))
            // Times in the store are whole seconds.
            try await Task.sleep(for: .milliseconds(1100))
            let confirmed = try await session.run("refresh", "--refresh", "--verbose")
            #expect(confirmed.status == 0 && confirmed.stdout == "")
            #expect(confirmed.stderrLines == [
                "aggregate: recorded 0 cards of 1 of 1 sources (1 unchanged since the last refresh: their cards seen again)",
                "cabify: unchanged since the last refresh (the upstream answered 304 Not Modified); its cards are seen again",
            ], "\(confirmed.stderr)")
            // Within the cache TTL no request is sent, and the line says so.
            let cached = try await session.run("refresh", "--verbose")
            #expect(cached.stderrLines.last == "cabify: answered from the cache within its cache_ttl (no request sent; --refresh asks the upstream): "
                + "the listing the store holds, its cards seen again", "\(cached.stderr)")
            // --max-age 0 asks again however fresh the cache is.
            let asked = try await session.run("refresh", "--max-age", "0", "--verbose")
            #expect(asked.stderrLines.last == "cabify: unchanged since the last refresh (the upstream answered 304 Not Modified); its cards are seen again")
            let after = objects(try await session.run("--stored", "--all", "--format", "jsonl"))
            #expect(after.map { $0["id"] } == before.map { $0["id"] } && after.count == 3)
            for (old, new) in zip(before, after) {
                #expect(new["first_seen"] == old["first_seen"])
                if case .string(let was)? = old["last_seen"], case .string(let now)? = new["last_seen"] {
                    #expect(now > was, "\(was) → \(now)")
                } else {
                    Issue.record("no last_seen: \(old) \(new)")
                }
            }

            session.server.control.set("cabify", [Fault(etag: "\"v2\"")])
            session.server.control.edit("cabify", Self.mug(6))
            let changed = try await session.run("refresh", "--refresh", "--verbose")
            #expect(changed.stderrLines == ["aggregate: recorded 3 cards of 1 of 1 sources", "cabify: 3 cards from 1 page"], "\(changed.stderr)")
            #expect(objects(try await session.run("history", "cabify:MUG", "--format", "jsonl")).map { $0["after"] } == [
                ["amount": 6, "currency": "EUR"],
            ])
            #expect(session.server.control.requests(to: "cabify").map(\.status) == [200, 304, 304, 200])
        }
    }

    /// What a fallback served is not news from the upstream: an offline run and a failing
    /// upstream move no last-seen time and mark nothing gone; `--no-record` and
    /// `record: false` keep runs out of the store; recording changes no output.
    @Test func fallbacksAndOptOutsRecordNothing() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let plain = try await session.run("--all", "--format", "jsonl", "--no-record")
            #expect(try await session.run("--stored", "--all").stdout == "")
            let recorded = try await session.run("--all", "--format", "jsonl")
            #expect(recorded.stdout == plain.stdout && recorded.status == plain.status && recorded.stderr == plain.stderr)
            let before = try await session.run("--stored", "--all", "--format", "jsonl")
            #expect(objects(before).count == 3)

            try await Task.sleep(for: .seconds(1.1))
            session.server.control.edit("cabify", Self.noVoucher)
            let offline = try await session.run("--offline", "--all", "--format", "jsonl")
            #expect(offline.stdout.contains("\"origin\":\"cache\""))
            #expect(try await session.run("--stored", "--all", "--format", "jsonl").stdout == before.stdout)

            try session.workspace.write("Sources.yml", try session.workspace.read("Sources.yml")
                .replacingOccurrences(of: "plugin: cabify", with: "plugin: cabify\n    record: false"))
            let optedOut = try await session.run("refresh", "--refresh")
            #expect(optedOut.status == 0, "\(optedOut.stderr)")
            #expect(try await session.run("--stored", "--all", "--format", "jsonl").stdout == before.stdout)
        }
    }

    /// A refresh with no network records nothing, and says why; a search of the
    /// empty store says it is empty, not that nothing matches.
    @Test func anOfflineFirstRefreshSaysWhyTheStoreStaysEmpty() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let search = try await session.run("search", "mug")
            #expect(search.status == 0 && search.stdout.isEmpty)
            #expect(search.stderrLines == ["aggregate: the card store is empty: `aggregate refresh` records what the sources answer live (a recorded snapshot or cached copy is not recorded)"])
            // A run that records nothing leaves a cached copy: offline, the refresh is answered by it.
            #expect(try await session.run("--all", "--no-record").status == 0)
            let refresh = try await session.run("--offline", "refresh")
            #expect(refresh.stderrLines.last == "aggregate: recorded nothing: no source answered live (each answered from its cache or recorded snapshot, which the card store does not record)",
                    "\(refresh.stderr)")
            #expect(try await session.run("--stored", "--all").stdout == "")
            // Online, the same refresh records, and says nothing of the kind.
            let live = try await session.run("refresh")
            #expect(live.status == 0 && !live.stderr.contains("recorded nothing"), "\(live.stderr)")
            #expect(try await session.run("search", "mug").stdout.contains("Mug"))
        }
    }

    /// A damaged card store is named with how to recover; a run that records into it
    /// still prints its cards and exits as it would, with one line on stderr.
    @Test func aDamagedStoreIsNamedAndNeverChangesARun() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let plain = try await session.run("--all", "--format", "jsonl", "--no-record")
            try session.workspace.write("state/cards.sqlite", String(repeating: "not a database\n", count: 512))
            let path = session.workspace.url.appendingPathComponent("state/cards.sqlite").path
            let stored = try await session.run("--stored")
            #expect(stored.status == 1 && stored.stdout == "")
            #expect(stored.stderrLines == ["aggregate: cannot read the card store: \(path) is damaged (file is not a database). It holds the card store, "
                + "so it is not replaced: restore it from a backup, or move it aside (mv \(path) \(path).bak) and the next refresh records what "
                + "the sources list now (the history starts again)"])
            let run = try await session.run("--all", "--format", "jsonl")
            #expect(run.status == plain.status && run.stdout == plain.stdout)
            #expect(run.stderrLines.count == 1 && run.stderrLines.first?.hasPrefix("aggregate: warning: cannot record the cards in the card store (") == true,
                    "\(run.stderr)")
        }
    }

    /// `refresh` fails as the feed command does: the same stderr lines and exit code when a
    /// source fails, and the others are recorded.
    @Test func refreshExitsAsTheFeedCommandDoes() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify", "target")) { session in
            session.server.control.set("cabify", [Fault(status: 404)])
            let feed = try await session.run("--all", "--format", "jsonl", "--no-record", "--refresh")
            session.server.control.set("cabify", [Fault(status: 404)])
            let refresh = try await session.run("refresh", "--refresh")
            #expect(feed.status == 3 && refresh.status == 3)
            #expect(refresh.stdout == "")
            #expect(refresh.stderrLines == feed.stderrLines && !refresh.stderrLines.isEmpty, "\(refresh.stderr)")
            let stored = objects(try await session.run("--stored", "--all", "--format", "jsonl"))
            #expect(!stored.isEmpty && stored.allSatisfy { $0["source"] == "target" })
        }
    }

    /// `serve` records what its background refresh gets and answers from the store: a
    /// voucher upstream dropped is still in `/feed.atom` after the refresh that saw it go,
    /// and `--stored` (the same state, after serve stopped) has it with `gone_since`.
    @Test func serveKeepsServingWhatUpstreamDropped() async throws {
        try await ServeTests.withServe(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    refresh: 5\n"]) { session, served in
            let started = ContinuousClock.now
            let before = try await ServeTests.get(served.base + "/feed.jsonl")
            #expect(before.body.contains(#""id":"cabify:VOUCHER""#))
            session.server.control.edit("cabify", Self.noVoucher)
            // The next refresh sees it go, which moves the store's counter and so the ETag.
            var after = before
            for _ in 0..<200 where after.headers.first(name: "etag") == before.headers.first(name: "etag") {
                try await Task.sleep(for: .milliseconds(50))
                after = try await ServeTests.get(served.base + "/feed.jsonl")
            }
            #expect(after.headers.first(name: "etag") != before.headers.first(name: "etag"), "no refresh within 10 s: \(served.log)")
            #expect(after.body.contains(#""id":"cabify:VOUCHER""#))
            let atom = try await ServeTests.get(served.base + "/feed.atom")
            #expect(atom.status == 200 && atom.body.contains("cabify:VOUCHER"))
            // Only the refresh fetched (every 4–4.75 s), not the 200 readers' requests: the
            // first, the one that saw the voucher go, and any a loaded machine's slow
            // answers gave time for.
            let elapsed = (ContinuousClock.now - started) / .seconds(1)
            let fetched = session.server.control.requests(to: "cabify").count
            #expect(fetched >= 2 && fetched <= 2 + Int(elapsed / 4), "\(fetched) requests in \(elapsed) s")
            await served.stop()
            let stored = objects(try await session.run("--stored", "--all", "--format", "jsonl"))
            #expect(stored.map { $0["id"] } == ["cabify:TSHIRT", "cabify:MUG", "cabify:VOUCHER"])
            #expect(stored.map { $0["gone_since"] != nil } == [false, false, true])
        }
    }

    /// A digest records what it fetched in the card store and takes the cards of its
    /// memory from there: a card upstream dropped is reported removed, with its title.
    @Test(arguments: StateKind.all) func aDigestReportsARemovalWithTheCardTheStoreKeeps(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), state: state) { session in
            let baseline = try await session.run("digest", "--name", "daily", "--date", "2026-11-22T08:00:00Z")
            #expect(baseline.status == 0 && baseline.stdout == "", "\(baseline.stderr)")
            #expect(objects(try await session.run("--stored", "--all", "--format", "jsonl")).count == 3)
            session.server.control.edit("cabify", Self.noVoucher)
            let removed = try await session.run("digest", "--name", "daily", "--date", "2026-11-22T08:00:00Z", "--include-removed",
                                                "--format", "jsonl", "--refresh")
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(removed.stdoutLines == [
                #"{"change":"removed","details":{"offer":"2 for 1"},"id":"cabify:VOUCHER","kind":"item","price":{"amount":5,"currency":"EUR"},"source":"cabify","tags":["2 for 1"],"title":"Cabify Voucher","v":1}"#,
            ], "\(removed.stdout)")
        }
    }
}
