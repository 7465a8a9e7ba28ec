import FeedCore
import FeedSourceTesting
import Foundation
import FixtureServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Alerts (`when:`) and delivery targets (`deliver:`) with the built binary against the
/// fixture server and its webhook sink (issue 30).
@Suite(.serialized) struct DeliveryTests {
    static let date = "2026-11-22T08:00:00Z"

    static func yaml(_ base: URL, digests: String) -> String {
        FixtureWorld.sourcesYml(base: base, sources: FixtureWorld.only("cabify"), extra: ["cabify": "    cache_ttl: 0\n"]) + digests
    }

    func digest(_ workspace: Workspace, _ arguments: String...) async throws -> Binary.Run {
        try await Binary.aggregate.run(["digest", "--date", Self.date] + workspace.stateArguments + arguments, in: workspace.url)
    }

    static func mug(_ price: Decimal) -> DataEdit {
        .set(list: "products", key: "code", match: "MUG", field: "price", value: .number(price))
    }

    @Test(arguments: StateKind.all) func aPriceAlertFiresOnceAndAgainAfterThePriceWentUpAndDown(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base, digests: """
                digests:
                  - name: mug-under-7
                    when:
                      - {price_below: 7, ids: ["cabify:MUG"]}

                """), state: state)
            func run() async throws -> String {
                let run = try await digest(workspace, "--name", "mug-under-7", "--format", "text")
                #expect(run.status == 0, "\(run.stderr)")
                return run.stdout
            }
            let alert = """
                mug-under-7: 1 alert (2026-11-22 08:00 UTC)

                cabify
                  price below 7: Cabify Coffee Mug — €6.50

                """
            #expect(try await run() == "")          // €7.50: not below 7
            server.control.edit("cabify", Self.mug(6.5))
            #expect(try await run() == alert)       // fires
            #expect(try await run() == "")          // still below: quiet
            server.control.clearEdits("cabify")
            server.control.edit("cabify", Self.mug(6.8))
            #expect(try await run() == "")          // still below, another price: quiet
            server.control.clearEdits("cabify")
            server.control.edit("cabify", Self.mug(8))
            #expect(try await run() == "")          // stopped holding
            server.control.clearEdits("cabify")
            server.control.edit("cabify", Self.mug(6.5))
            #expect(try await run() == alert)       // holds again: fires again
        }
    }

    /// Two webhooks; one fails for three runs. The good one has the report once and is not
    /// sent it again; the failing one has it exactly once after it recovers.
    @Test(arguments: StateKind.all) func aFailingTargetGetsTheSameReportOnceItRecoversAndTheOtherIsNotResent(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base, digests: """
                digests:
                  - name: shop
                    deliver:
                      - {webhook: "\(base.absoluteString)/_sink/good", style: slack}
                      - {webhook: "${SINK_BASE}/_sink/bad", headers: {Authorization: "Bearer ${SINK_TOKEN}"}}

                """), state: state)
            let environment = ["SINK_BASE": base.absoluteString, "SINK_TOKEN": "t0ken"]
            func run() async throws -> Binary.Run {
                try await Binary.aggregate.run(["digest", "--date", Self.date, "--name", "shop"] + workspace.stateArguments,
                                               in: workspace.url, environment: environment)
            }
            #expect(try await run().status == 0)    // the baseline
            server.control.set("sink-bad", [Fault(status: 503, retryAfter: "0")])
            server.control.edit("cabify", .add(list: "products", item: ["code": "HOODIE", "name": "Cabify Hoodie", "price": 30]))
            for attempt in 1...3 {
                let failing = try await run()
                #expect(failing.status == 1)
                #expect(failing.stdout == "")
                #expect(failing.stderrLines == [
                    "aggregate: digest 'shop': delivery to webhook ${SINK_BASE}/_sink/bad failed: HTTP 503: the sink fails on purpose (503) (\(base.absoluteString)/_sink/bad); the report waits for the next run",
                ], "run \(attempt)")
            }
            // Three runs, three tries each: the good sink was sent the report once.
            #expect(server.control.sinkPosts(to: "bad").isEmpty)
            #expect(server.control.sinkPosts(to: "good").count == 1)
            server.control.reset()
            let recovered = try await run()
            #expect(recovered.status == 0 && recovered.stderr == "")
            #expect(try await run().status == 0)
            let good = server.control.sinkPosts(to: "good")
            let bad = server.control.sinkPosts(to: "bad")
            #expect(good.count == 1 && bad.count == 1)
            #expect(good.first?.idempotencyKey != nil && good.first?.idempotencyKey == bad.first?.idempotencyKey)
            #expect(bad.first?.headers["authorization"] == "Bearer t0ken")
            #expect(good.first?.body == #"{"text":"*shop: 1 new*\n• New: Cabify Hoodie — €30.00"}"#)
            let report = try JSONSerialization.jsonObject(with: Data((bad.first?.body ?? "").utf8)) as? [String: Any]
            #expect(report?["digest"] as? String == "shop")
            #expect(report?["summary"] as? String == "1 new")
            let items = report?["items"] as? [[String: Any]]
            #expect(items?.count == 1 && items?.first?["change"] as? String == "new")
            #expect((items?.first?["card"] as? [String: Any])?["id"] as? String == "cabify:HOODIE")
        }
    }

    @Test func ntfyExecAndFileTargetsGetTheReport() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base, digests: """
                digests:
                  - name: shop
                    format: text
                    deliver:
                      - {webhook: "\(base.absoluteString)/_sink/ntfy", style: ntfy}
                      - {exec: [sh, -c, 'cat > piped.txt; printf %s "$AGGREGATE_IDEMPOTENCY_KEY" > key.txt']}
                      - {file: out/shop.txt}
                      - {exec: [sh, -c, 'echo "no mail server here" >&2; exit 75']}

                """), state: .sqlite)
            try FileManager.default.createDirectory(at: workspace.url.appendingPathComponent("out"), withIntermediateDirectories: true)
            #expect(try await digest(workspace, "--name", "shop").status == 0)
            server.control.edit("cabify", Self.mug(6))
            let run = try await digest(workspace, "--name", "shop")
            #expect(run.status == 1)
            #expect(run.stderrLines == [
                #"aggregate: digest 'shop': delivery to exec sh -c echo "no mail server here" >&2; exit 75 failed: exited with status 75: no mail server here; the report waits for the next run"#,
            ])
            let text = """
                shop: 1 price drop (2026-11-22 08:00 UTC)

                cabify
                  price drop: Cabify Coffee Mug — €6.00, was €7.50 (-20%)

                """
            #expect(try workspace.read("piped.txt") == text)
            #expect(try workspace.read("out/shop.txt") == text)
            let ntfy = server.control.deliveries(to: "ntfy")
            #expect(ntfy.map(\.body) == ["Price drop: Cabify Coffee Mug — €6.00, was €7.50 (-20%)"])
            #expect(ntfy.first?.headers["title"] == "shop: 1 price drop")
            #expect(ntfy.first?.idempotencyKey == (try workspace.read("key.txt")))
            // The next run sends nothing again to the three that have it.
            _ = try await digest(workspace, "--name", "shop")
            #expect(server.control.sinkPosts(to: "ntfy").count == 1)
        }
    }

    /// Taken out of `deliver:`, a program's owed report is dropped with a line; a file's is
    /// still written to that file (it needs nothing but its path), so nothing is lost.
    @Test func aReportOwedToARemovedFileIsStillWrittenThere() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            func declare(_ targets: String) -> String {
                Self.yaml(base, digests: """
                    digests:
                      - name: shop
                        format: text
                        deliver:
                    \(targets)

                    """)
            }
            let workspace = try await Workspace(sourcesYml: declare("""
                      - {file: out/shop.txt}
                      - {exec: [sh, -c, 'exit 75']}
                """), state: .sqlite)
            #expect(try await digest(workspace, "--name", "shop").status == 0)
            server.control.edit("cabify", Self.mug(6))
            let failed = try await digest(workspace, "--name", "shop")
            #expect(failed.status == 1)
            #expect(failed.stderrLines.count == 2, "\(failed.stderr)")
            try FileManager.default.createDirectory(at: workspace.url.appendingPathComponent("out"), withIntermediateDirectories: true)
            try workspace.write("Sources.yml", declare("""
                      - {webhook: "\(base.absoluteString)/_sink/ntfy", style: ntfy}
                """))
            let run = try await digest(workspace, "--name", "shop")
            #expect(run.status == 0)
            #expect(run.stderrLines == ["digest 'shop': a report for exec sh -c exit 75, which deliver: no longer lists, is dropped"])
            #expect(try workspace.read("out/shop.txt").contains("price drop: Cabify Coffee Mug — €6.00, was €7.50 (-20%)"))
            #expect(server.control.sinkPosts(to: "ntfy").isEmpty)
        }
    }

    @Test func aProgramThatTakesTooLongIsStoppedAndTriedAgain() async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try Workspace(sourcesYml: Self.yaml(base, digests: """
                digests:
                  - name: slow
                    deliver:
                      - {exec: [sleep, "30"], timeout: 0.5}

                """))
            #expect(try await digest(workspace, "--name", "slow").status == 0)
            server.control.edit("cabify", Self.mug(6))
            let started = ContinuousClock.now
            let run = try await digest(workspace, "--name", "slow")
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(run.status == 1)
            #expect(run.stderrLines == ["aggregate: digest 'slow': delivery to exec sleep 30 failed: took longer than 0.5 s; stopped it; the report waits for the next run"])
        }
    }

    /// 200 runs, two in three killed at a random moment, two webhook targets that answer
    /// after 0 to 40 ms: every new card reaches each target in exactly one report (counted
    /// by the `Idempotency-Key` the sink keeps once), none twice, none lost.
    @Test(arguments: StateKind.all) func killedRunsLoseAndDoubleNoDelivery(_ state: StateKind) async throws {
        let server = FixtureWorld.server()
        try await server.withRunning { base in
            let workspace = try await Workspace(sourcesYml: Self.yaml(base, digests: """
                digests:
                  - name: kill
                    deliver:
                      - {webhook: "\(base.absoluteString)/_sink/one"}
                      - {webhook: "\(base.absoluteString)/_sink/two"}

                """), state: state)
            func arguments() -> [String] { ["digest", "--name", "kill", "--wait", "60"] + workspace.stateArguments }
            #expect(try await Binary.aggregate.run(arguments(), in: workspace.url).status == 0)
            var rng = SystemRandomNumberGenerator()
            let runs = 200
            for run in 0..<runs {
                server.control.set("sink-one", [Fault(latencyMs: Int.random(in: 0...40, using: &rng))])
                server.control.set("sink-two", [Fault(latencyMs: Int.random(in: 0...40, using: &rng))])
                server.control.edit("cabify", .add(list: "products", item: ["code": .string("K\(run)"), "name": .string("Kill \(run)"), "price": 1]))
                let (process, exited) = try Binary.aggregate.launch(arguments(), in: workspace.url,
                                                                    stdout: workspace.url.appendingPathComponent("stdout.txt"))
                if run % 3 != 2 {
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...250, using: &rng)))
                    if process.processIdentifier > 0 { kill(process.processIdentifier, SIGKILL) }
                }
                #expect(await process.awaitExit(exited))
            }
            server.control.reset()
            for _ in 0..<2 {
                let run = try await Binary.aggregate.run(arguments(), in: workspace.url)
                #expect(run.status == 0, "\(run.stderr)")
            }
            for sink in ["one", "two"] {
                var reported: [String: Int] = [:]
                for delivery in server.control.deliveries(to: sink) {
                    let report = try JSONSerialization.jsonObject(with: Data(delivery.body.utf8)) as? [String: Any]
                    for item in report?["items"] as? [[String: Any]] ?? [] {
                        if let id = (item["card"] as? [String: Any])?["id"] as? String { reported[id, default: 0] += 1 }
                    }
                }
                let lost = (0..<runs).filter { reported["cabify:K\($0)"] == nil }
                let doubled = reported.filter { $0.value > 1 }.keys.sorted()
                #expect(lost.isEmpty, "\(sink): lost \(lost)")
                #expect(doubled.isEmpty, "\(sink): doubled \(doubled)")
                #expect(reported.count == runs, "\(sink): \(reported.count) cards")
            }
        }
    }

    /// The examples of docs/digests.md and the README are configuration that loads: each
    /// `digests:` block, appended to the shipped Sources.yml, validates.
    @Test func theDocumentedExamplesValidate() async throws {
        let shipped = try String(contentsOf: ReadmeSections.root.appendingPathComponent("Sources.yml"), encoding: .utf8)
        var blocks: [String] = []
        for document in ["docs/digests.md", "README.md"] {
            let text = try String(contentsOf: ReadmeSections.root.appendingPathComponent(document), encoding: .utf8)
            for block in text.components(separatedBy: "```yaml\n").dropFirst() {
                // (The reference block names a template file that is not there to read.)
                guard let body = block.components(separatedBy: "```").first, body.hasPrefix("digests:") || body.hasPrefix("filters:"),
                      !body.contains("template:") else { continue }
                blocks.append(body)
            }
        }
        #expect(blocks.count == 4)
        for block in blocks {
            let workspace = try Workspace(sourcesYml: shipped + "\n" + block)
            let run = try await workspace.aggregate("validate", environment: ["SLACK_WEBHOOK": "https://hooks.example.org/x"])
            #expect(run.status == 0, "\(block)\n\(run.stderr)")
        }
    }

    @Test func badConditionsAndTargetsAreConfigErrorsWithTheirPlaces() async throws {
        let workspace = try Workspace(sourcesYml: """
            sources:
              - id: cabify
                plugin: cabify
                url: https://example.org/Products.json
            digests:
              - name: bad
                output: out.md
                when:
                  - soon
                  - {price_below: cheap}
                  - {price_below: 5, ids: ["target:1", "nocolon"]}
                  - {price_drop: {percent: 150}}
                  - {new: true, back_in_stock: true}
                deliver:
                  - {webhook: "https://x.example/hook", exec: [mail]}
                  - {webhook: "not a url", style: teams}
                  - {exec: []}
                  - {file: a.md}
                  - {file: a.md}

            """)
        let run = try await workspace.aggregate("validate")
        #expect(run.status == 2)
        #expect(run.stderrLines.dropLast() == [
            "Sources.yml:7:13: digests[0].output: and deliver: both say where the report goes; write the file as a target: {file: PATH}",
            #"Sources.yml:9:9: digests[0].when[0]: unknown condition "soon" (known: new, back_in_stock, price_drop: {percent: 10}, price_below: 100, or a filter rule)"#,
            #"Sources.yml:10:23: digests[0].when[1].price_below: expected a number, got text "cheap""#,
            #"Sources.yml:11:32: digests[0].when[2].ids[0]: "target:1" names no configured source (known: cabify)"#,
            "Sources.yml:11:44: digests[0].when[2].ids[1]: expected a card id such as target:12",
            "Sources.yml:12:22: digests[0].when[3].price_drop: percent must be from 0 to 99, got 150",
            "Sources.yml:13:9: digests[0].when[4]: gives new and back_in_stock: write one condition per entry",
            "Sources.yml:15:9: digests[0].deliver[0]: gives webhook and exec: write one target per entry",
            #"Sources.yml:16:19: digests[0].deliver[1].webhook: expected an absolute http(s) URL (or ${VAR} holding one), got "not a url""#,
            #"Sources.yml:16:39: digests[0].deliver[1].style: must be one of json, slack, discord, ntfy, got "teams""#,
            "Sources.yml:17:16: digests[0].deliver[2].exec: needs the program and its arguments, like [sendmail, -t]",
        ])
        #expect(run.stderrLines.last?.hasPrefix("Sources.yml:19:9: digests[0].deliver: file /") == true)
        #expect(run.stderrLines.last?.hasSuffix("/a.md is listed twice") == true)
    }
}
