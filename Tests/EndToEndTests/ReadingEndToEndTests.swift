import FeedCore
import FeedSourceTesting
import Foundation
import Testing

/// Reading marks through the built binary: `aggregate mark`, `--unread`, `--starred`.
@Suite struct ReadingEndToEndTests {
    func ids(_ run: Binary.Run) -> [String] {
        run.stdoutLines.compactMap { line in
            guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)),
                  case .string(let id)? = members["id"] else { return nil }
            return id
        }
    }

    @Test(arguments: StateKind.all) func markedCardsLeaveTheUnreadViewAndStarredOnesAreListed(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), state: state) { session in
            #expect(try await session.run("refresh").status == 0)
            let unread = try await session.run("--unread", "--format", "jsonl")
            #expect(unread.status == 0 && unread.stderr == "", "\(unread.stderr)")
            #expect(ids(unread) == ["cabify:VOUCHER", "cabify:TSHIRT", "cabify:MUG"])

            // Whole ids and shortened ones (… or ...), as `show` takes them.
            let read = try await session.run("mark", "read", "cabify:MUG", "cabify:TS...RT")
            #expect(read.status == 0)
            #expect(read.stderrLines == ["aggregate: marked 2 cards read"])
            #expect(ids(try await session.run("--unread", "--format", "jsonl")) == ["cabify:VOUCHER"])
            let star = try await session.run("mark", "star", "cabify:M…G")
            #expect(star.stderrLines == ["aggregate: marked 1 card starred"])
            let starred = try await session.run("--starred", "--format", "jsonl")
            #expect(ids(starred) == ["cabify:MUG"])
            #expect(starred.stdout.contains(#""read_at":"#) && starred.stdout.contains(#""starred_at":"#))

            // One unknown id: the others are marked, the unknown one named, exit 1.
            let partly = try await session.run("mark", "unread", "cabify:MUG", "cabify:NOPE")
            #expect(partly.status == 1)
            #expect(partly.stderrLines == [
                "aggregate: no card cabify:NOPE in the card store; `aggregate --stored --all --format text` lists the cards it keeps",
                "aggregate: marked 1 card unread",
            ])
            #expect(ids(try await session.run("--unread", "--format", "jsonl")) == ["cabify:VOUCHER", "cabify:MUG"])

            // Everything up to now; then an empty view says so.
            let all = try await session.run("mark", "read", "--all", "--before", "now")
            #expect(all.status == 0)
            #expect(all.stderrLines == ["aggregate: marked 2 cards read"])
            let none = try await session.run("--unread", "--format", "jsonl")
            #expect(none.status == 0 && none.stdout == "")
            #expect(none.stderrLines == ["aggregate: no unread cards in the card store"])
        }
    }

    @Test func markUsageErrorsExit2() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let cases: [([String], String)] = [
                (["mark", "read"], "Error: name the cards to mark read (e.g. `aggregate mark read cabify:MUG`), or mark every card read with `aggregate mark read --all`"),
                (["mark", "star", "--all"], "Error: --all marks cards read: write `aggregate mark read --all`"),
                (["mark", "read", "--all", "--before", "yesterday"], "Error: --before must be an RFC 3339 time such as 2026-11-27T08:00:00Z, or now; got \"yesterday\""),
                (["mark", "read", "MUG"], "aggregate: \"MUG\" is not a card id; write SOURCE:ID, e.g. cabify:MUG"),
                (["--unread", "--starred"], "Error: --unread and --starred are two views: give one (`aggregate mark` changes what they hold)"),
                (["--unread", "--offline"], "Error: --unread reads the card store and asks no upstream: leave out --offline and --refresh"),
            ]
            for (arguments, message) in cases {
                let run = try await session.workspace.run(arguments: arguments)
                #expect(run.status == 2, "\(arguments)")
                #expect(run.stderrLines.first == message, "\(arguments)")
            }
        }
    }
}

/// `aggregate search` through the built binary.
@Suite struct SearchEndToEndTests {
    @Test(arguments: StateKind.all) func searchFindsKeptCardsGoneOnesTooAndPages(_ state: StateKind) async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), state: state) { session in
            #expect(try await session.run("refresh").status == 0)
            // The voucher leaves the shop: search still finds it, with gone_since.
            session.server.control.edit("cabify", CardStoreEndToEndTests.noVoucher)
            #expect(try await session.run("refresh", "--refresh").status == 0)

            let found = try await session.run("search", "voucher", "--format", "jsonl")
            #expect(found.status == 0 && found.stderr == "", "\(found.stderr)")
            #expect(ReadingEndToEndTests().ids(found) == ["cabify:VOUCHER"])
            #expect(found.stdout.contains(#""gone_since":"#))

            // A word with a leading dash inside one quoted argument is the query's; filters; paging.
            let excluded = try await session.run("search", "source:cabify -voucher", "--format", "jsonl")
            #expect(ReadingEndToEndTests().ids(excluded).sorted() == ["cabify:MUG", "cabify:TSHIRT"], "\(excluded.stderr)")
            let cheap = try await session.run("search", "price<10", "--per-page", "1", "--page", "2", "--format", "jsonl")
            #expect(cheap.status == 0)
            #expect(ReadingEndToEndTests().ids(cheap).count == 1)

            let none = try await session.run("search", "teapot", "--format", "jsonl")
            #expect(none.status == 0 && none.stdout == "")
            #expect(none.stderrLines == ["aggregate: no card in the card store matches: teapot"])
            let past = try await session.run("search", "source:cabify", "--page", "9", "--format", "jsonl")
            #expect(past.stderrLines == ["aggregate: page 9 is past the end: there is 1 page (3 cards at 20 per page)"])

            let usage = try await session.run("search", "kind:gadget")
            #expect(usage.status == 2)
            #expect(usage.stderrLines.first == "Error: kind:gadget is not a kind; kinds are deal, product, post, person, item")
            let empty = try await session.run("search")
            #expect(empty.status == 2)
            #expect(empty.stderrLines.first == #"Error: give words to search for, e.g. "red shirt" -kids source:ltk price<100"#)
        }
    }
}
