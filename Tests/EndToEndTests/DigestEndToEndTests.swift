import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `aggregate digest` against the fixture server, with data changed through its controls.
@Suite(.serialized) struct DigestEndToEndTests {
    static let date = "2026-11-22T08:00:00Z"

    /// Cabify and Target at the fixture server; the Target entry fails fast.
    static func yaml(_ base: URL, digests: String = "") -> String {
        FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("target") + FixtureWorld.only("cabify"),
                                extra: ["target": "    retries: 1\n    fallback: none\n    cache_ttl: 0\n", "cabify": "    cache_ttl: 0\n"]) + digests
    }

    func digest(_ workspace: Workspace, _ arguments: String...) async throws -> Binary.Run {
        try await Binary.aggregate.run(["digest", "--date", Self.date] + workspace.stateArguments + arguments, in: workspace.url)
    }

    /// A fixture server and a workspace whose digest "daily" has its baseline.
    func withBaseline(_ state: StateKind, _ body: (FixtureServer, Workspace, URL) async throws -> Void) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base), state: state)
            _ = try await digest(workspace, "--name", "daily")
            try await body(server, workspace, base)
        }
    }

    static let mugDrop = DataEdit.set(list: "products", key: "code", match: "MUG", field: "price", value: 6)
    static let hoodie = DataEdit.add(list: "products", item: ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30])

    @Test(arguments: StateKind.all) func baselineThenNothingThenEachChangeExactlyOnce(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base), state: state)
            let baseline = try await digest(workspace, "--name", "daily")
            #expect(baseline.status == 0)
            #expect(baseline.stdout == "")
            #expect(baseline.stderrLines == ["digest 'daily': baseline of 23 cards recorded; the next run reports changes"])
            let unchanged = try await digest(workspace, "--name", "daily")
            #expect(unchanged.status == 0 && unchanged.stdout == "" && unchanged.stderr == "")

            server.control.edit("cabify", Self.mugDrop)
            let drop = try await digest(workspace, "--name", "daily", "--format", "text")
            #expect(drop.status == 0)
            #expect(drop.stdout == """
                daily: 1 price drop (2026-11-22 08:00 UTC)

                cabify
                  price drop: Cabify Coffee Mug — €6.00, was €7.50 (-20%)

                """)
            #expect(try await digest(workspace, "--name", "daily").stdout == "")

            server.control.edit("cabify", Self.hoodie)
            let new = try await digest(workspace, "--name", "daily", "--format", "jsonl")
            #expect(new.stdoutLines == [#"{"change":"new","id":"cabify:HOODIE","kind":"item","price":{"amount":30,"currency":"EUR"},"source":"cabify","tags":[],"title":"Cabify Hoodie","v":1}"#])
            #expect(try await digest(workspace, "--name", "daily").stdout == "")
        }
    }

    @Test(arguments: StateKind.all) func aFailingSourceIsNamedAndItsCardsDoNotComeBackAsNew(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            server.control.set("target", [Fault(status: 503)])
            server.control.edit("cabify", Self.hoodie)
            let failing = try await digest(workspace, "--name", "daily")
            #expect(failing.status == 3)
            #expect(failing.stderrLines == ["target: not checked: HTTP 503 (no retries configured) (\(base.absoluteString)/target/deals)"])
            #expect(failing.stdout.contains("- **New:** Cabify Hoodie — €30.00"))
            #expect(failing.stdout.hasSuffix("Not checked: **target** — HTTP 503 (no retries configured) (\(base.absoluteString)/target/deals)\n"))
            server.control.reset()
            let recovered = try await digest(workspace, "--name", "daily", "--include-removed")
            #expect(recovered.status == 0)
            #expect(recovered.stdout == "")
            #expect(recovered.stderr == "")
        }
    }

    @Test(arguments: StateKind.all) func dryRunReportsTheSameTwiceAndCommitsNothing(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            server.control.edit("cabify", Self.mugDrop)
            let first = try await digest(workspace, "--name", "daily", "--dry-run")
            let second = try await digest(workspace, "--name", "daily", "--dry-run")
            #expect(!first.stdout.isEmpty)
            #expect(second.stdout == first.stdout)
            let real = try await digest(workspace, "--name", "daily")
            #expect(real.stdout == first.stdout)
            #expect(try await digest(workspace, "--name", "daily").stdout == "")
        }
    }

    @Test(arguments: StateKind.all) func eachFormatIsExact(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            server.control.edit("cabify", Self.mugDrop, Self.hoodie)
            server.control.edit("target", .set(list: "products", key: "id", match: "0", field: "sale_price",
                                               value: ["amount_in_cents": 19999, "currency_symbol": "$", "display_string": "$199.99"]))
            let markdown = try await digest(workspace, "--name", "daily", "--dry-run")
            #expect(markdown.stdout == """
                # daily: 1 new, 2 price drops

                _2026-11-22 08:00 UTC_

                ## target

                - **Price drop:** VIZIO D-Series 40" Class 1080p Full-Array LED HD Smart TV — $199.99, was $229.99 (-13%)

                ## cabify

                - **Price drop:** Cabify Coffee Mug — €6.00, was €7.50 (-20%)
                - **New:** Cabify Hoodie — €30.00

                """)
            // Any card format of the one registry renders the changed cards: a feed of news.
            let atom = try await digest(workspace, "--name", "daily", "--dry-run", "--format", "atom")
            #expect(atom.status == 0)
            #expect(atom.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n  <title type=\"text\">aggregate: daily</title>"))
            #expect(atom.stdout.components(separatedBy: "<entry>").count == 4)
            #expect(atom.stdout.contains("<id>tag:aggregate,2026:card/cabify:HOODIE</id>"))
            let html = try await digest(workspace, "--name", "daily", "--dry-run", "--format", "html")
            #expect(html.stdout == """
                <!DOCTYPE html>
                <html lang="en"><head><meta charset="utf-8">
                <title>daily: 1 new, 2 price drops</title></head>
                <body style="font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; max-width: 40em; margin: 1em auto; color: #222">
                <h1 style="font-size: 1.4em">daily: 1 new, 2 price drops</h1>
                <p style="color: #666">2026-11-22 08:00 UTC</p>
                <h2 style="font-size: 1.1em; border-bottom: 1px solid #ddd">target</h2>
                <ul>
                <li><strong>Price drop:</strong> VIZIO D-Series 40&quot; Class 1080p Full-Array LED HD Smart TV — $199.99, was $229.99 (-13%)</li>
                </ul>
                <h2 style="font-size: 1.1em; border-bottom: 1px solid #ddd">cabify</h2>
                <ul>
                <li><strong>Price drop:</strong> Cabify Coffee Mug — €6.00, was €7.50 (-20%)</li>
                <li><strong>New:</strong> Cabify Hoodie — €30.00</li>
                </ul>
                </body></html>

                """)
            let text = try await digest(workspace, "--name", "daily", "--dry-run", "--format", "text")
            #expect(text.stdout == """
                daily: 1 new, 2 price drops (2026-11-22 08:00 UTC)

                target
                  price drop: VIZIO D-Series 40" Class 1080p Full-Array LED HD Smart TV — $199.99, was $229.99 (-13%)

                cabify
                  price drop: Cabify Coffee Mug — €6.00, was €7.50 (-20%)
                  new: Cabify Hoodie — €30.00

                """)
            let jsonl = try await digest(workspace, "--name", "daily", "--dry-run", "--format", "jsonl")
            #expect(jsonl.stdoutLines.map { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }.map { [$0?["id"], $0?["change"], $0?["previous_price"]] } == [
                [.string("target:0"), .string("price_drop"), .number(Decimal(string: "229.99")!)],
                [.string("cabify:MUG"), .string("price_drop"), .number(Decimal(string: "7.5")!)],
                [.string("cabify:HOODIE"), .string("new"), nil],
            ])
        }
    }

    @Test(arguments: StateKind.all) func declaredDigestsTemplatesOutputFilesAndDue(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base, digests: """
                digests:
                  - name: shop
                    sources: [cabify]
                    every: 1h
                    template: shop.mustache
                    output: out/shop.txt

                """), state: state)
            try workspace.write("shop.mustache", "{{name}} {{counts_text}}\n{{#sources}}{{#items}}* {{change}} {{title}} {{price_text}}\n{{/items}}{{/sources}}")
            try workspace.write("out/.keep", "")
            let validate = try await workspace.aggregate("validate")
            #expect(validate.status == 0)
            let baseline = try await digest(workspace, "--due")
            #expect(baseline.stderrLines == ["digest 'shop': baseline of 3 cards recorded; the next run reports changes"])
            let notDue = try await digest(workspace, "--due", "--verbose")
            #expect(notDue.stderrLines == ["aggregate: no digest is due"])
            server.control.edit("cabify", Self.mugDrop)
            let later = try await workspace.run("digest", "--date", "2026-11-22T09:30:00Z", "--due")
            #expect(later.status == 0 && later.stdout == "")
            let written = try String(contentsOf: workspace.url.appendingPathComponent("out/shop.txt"), encoding: .utf8)
            #expect(written == "shop 1 price drop\n* price_drop Cabify Coffee Mug €6.00, was €7.50 (-20%)\n")

            try workspace.write("shop.mustache", "line one\n{{#sources}}\n{{/items}}")
            let broken = try await workspace.aggregate("validate")
            #expect(broken.status == 2)
            #expect(broken.stderrLines == ["\(workspace.url.path)/shop.mustache:3:4: template error: this {{/…}} does not close the section that is open"])
        }
    }

    @Test(arguments: StateKind.all) func aFailedWriteCommitsNothing(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            server.control.edit("cabify", Self.hoodie)
            let failed = try await digest(workspace, "--name", "daily", "--output", "missing-dir/digest.md")
            #expect(failed.status == 1)
            #expect(failed.stderrLines.first?.hasPrefix("aggregate: cannot write missing-dir/digest.md: ") == true)
            let retried = try await digest(workspace, "--name", "daily", "--output", "digest.md")
            #expect(retried.status == 0)
            let written = try String(contentsOf: workspace.url.appendingPathComponent("digest.md"), encoding: .utf8)
            #expect(written.contains("Cabify Hoodie"))
        }
    }

    @Test(arguments: StateKind.all) func aSecondRunOfTheSameDigestWaitsThenExits75(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            // Another holder of the digest's lock: the file lock, or the advisory lock
            // taken by another PostgreSQL session.
            let holder: () async -> Void
            switch state {
            case .sqlite:
                let lock = open(workspace.url.appendingPathComponent("state/digest-daily.lock").path, O_RDWR)
                #expect(lock >= 0)
                #expect(flock(lock, LOCK_EX) == 0)
                holder = { close(lock) }
            case .postgres:
                let psql = try await PostgresTestServer.holdAdvisoryLock("aggregate digest daily", in: workspace.databaseURL, seconds: 5)
                holder = { await psql.release() }
            }
            let busy = try await digest(workspace, "--name", "daily", "--wait", "0.3")
            #expect(busy.status == 75)
            #expect(busy.stderrLines == ["aggregate: digest 'daily' is already running"])
            let other = try await digest(workspace, "--name", "weekly")
            #expect(other.status == 0)
            await holder()
            try await Task.sleep(for: .milliseconds(200))
            let after = try await digest(workspace, "--name", "daily", "--wait", "5")
            #expect(after.status == 0)
        }
    }

    @Test(arguments: StateKind.all) func concurrentRunsReportEachChangeExactlyOnce(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            server.control.edit("cabify", Self.mugDrop, Self.hoodie)
            let runs = try await withThrowingTaskGroup(of: Binary.Run.self) { group in
                for _ in 0..<3 { group.addTask { try await digest(workspace, "--name", "daily", "--format", "jsonl") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(runs.allSatisfy { $0.status == 0 })
            let reported = runs.flatMap(\.stdoutLines)
            #expect(reported.count == 2)
            #expect(reported.filter { $0.contains("cabify:MUG") }.count == 1)
            #expect(reported.filter { $0.contains("cabify:HOODIE") }.count == 1)
        }
    }

    /// Every other run is killed at a random moment; each change is still reported at
    /// least once and at most twice, and the store stays usable.
    @Test(arguments: StateKind.all) func killedRunsNeverLoseAChange(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            var output = ""
            var rng = SystemRandomNumberGenerator()
            for run in 0..<50 {
                server.control.edit("cabify", .add(list: "products", item: ["code": .string("ITEM\(run)"), "name": .string("Item \(run)"), "price": 1]))
                let file = workspace.url.appendingPathComponent("run-\(run).out")
                let (process, exited) = try Binary.aggregate.launch(
                    ["digest", "--name", "daily", "--format", "jsonl"] + workspace.stateArguments, in: workspace.url, stdout: file)
                if run % 2 == 0 {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...120, using: &rng)))
                    if process.processIdentifier > 0 { kill(process.processIdentifier, SIGKILL) }
                }
                #expect(await process.awaitExit(exited))
                output += try String(contentsOf: file, encoding: .utf8)
            }
            let final = try await digest(workspace, "--name", "daily", "--format", "jsonl")
            #expect(final.status == 0)
            output += final.stdout
            for run in 0..<50 {
                let count = output.components(separatedBy: "\"id\":\"cabify:ITEM\(run)\"").count - 1
                #expect((1...2).contains(count), "ITEM\(run) reported \(count) times")
            }
        }
    }

    /// With `--output FILE`, 200 runs, two in three killed at a random moment: every
    /// change reaches the file exactly once (counted over every version of the file).
    @Test(arguments: StateKind.all) func killedFileRunsDeliverEachChangeExactlyOnce(_ state: StateKind) async throws {
        try await withBaseline(state) { server, workspace, base in
            let file = workspace.url.appendingPathComponent("digest.jsonl")
            var versions: [String] = []
            var lastInode: Int?
            func observe() throws {
                guard let inode = try? FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? Int,
                      inode != lastInode else { return }
                lastInode = inode
                versions.append(try String(contentsOf: file, encoding: .utf8))
            }
            var rng = SystemRandomNumberGenerator()
            let runs = 200
            for run in 0..<runs {
                server.control.edit("cabify", .add(list: "products", item: ["code": .string("ONCE\(run)"), "name": .string("Once \(run)"), "price": 1]))
                let (process, exited) = try Binary.aggregate.launch(
                    ["digest", "--name", "daily", "--format", "jsonl", "--output", "digest.jsonl"] + workspace.stateArguments,
                    in: workspace.url, stdout: workspace.url.appendingPathComponent("stdout.txt"))
                if run % 3 != 2 {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...200, using: &rng)))
                    if process.processIdentifier > 0 { kill(process.processIdentifier, SIGKILL) }
                }
                #expect(await process.awaitExit(exited))
                try observe()
            }
            // One run finishes what an interrupted one committed, the next reports the rest.
            for _ in 0..<2 {
                let run = try await Binary.aggregate.run(
                    ["digest", "--name", "daily", "--format", "jsonl", "--output", "digest.jsonl"] + workspace.stateArguments, in: workspace.url)
                #expect(run.status == 0, "\(run.stderr)")
                try observe()
            }
            let delivered = versions.joined(separator: "\n")
            for run in 0..<runs {
                let count = delivered.components(separatedBy: "\"id\":\"cabify:ONCE\(run)\"").count - 1
                #expect(count == 1, "ONCE\(run) delivered \(count) times")
            }
        }
    }
}
