@testable import Exec
import FeedConfig
import FeedCore
import FeedSupport
import FeedEngine
import FeedSourceTesting
import Foundation
import Testing

/// `plugin: exec` on its own: the JSON Lines protocol, its options, and the conformance
/// suite with the README's example program.
@Suite struct ExecTests {
    @Test func theConformanceSuitePassesWithTheExampleProgram() async throws {
        try await Conformance.check(ExecSource.self)
    }

    @Test func theREADMEShowsTheExampleProgramThatTheTestsRun() throws {
        let section = try ReadmeSections.section(for: "exec")
        let program = try String(contentsOfFile: ExecSource.exampleProgram, encoding: .utf8)
        #expect(section.contains("```python\n\(program)```"))
        #expect(program.split(separator: "\n", omittingEmptySubsequences: false).dropLast().count <= 15)
    }

    @Test func linesBecomeCardsAndTheLastLineTheCursor() {
        let output = """
            {"id": 7, "title": "Seven", "price": {"amount": 9.90, "currency": "EUR"}, "v": 9, "source": "x"}
            not json
            {"id": "b", "kind": "gadget", "title": "B"}
            {"title": "no id"}

            {"id": "c", "title": "C", "url": "/relative"}
            {"id": "d", "title": "D", "published": "2024-02-03T04:05:06Z", "kind": "post"}
            {"next": "page-2"}
            """
        let page = ExecCardLines.page(Data(output.utf8), sourceID: "hn", json: JSONBody.tape)
        #expect(page.cards == [
            Card(source: "hn", upstreamID: "7", kind: .item, title: "Seven", price: Price(amount: Decimal(string: "9.9")!, currency: "EUR")),
            Card(source: "hn", upstreamID: "d", kind: .post, title: "D", published: Date(timeIntervalSince1970: 1_706_933_106)),
        ])
        #expect(page.skipped.map(\.description) == [
            "skipped line 2: not a JSON object",
            "skipped line 3: kind: Cannot initialize Kind from invalid String value gadget",
            "skipped line 4: no \"id\"",
            "skipped line 6: \"url\" is not an absolute http(s) URL: /relative",
        ])
        #expect(page.next == "page-2")
        #expect(ExecCardLines.page(Data(#"{"next": null}"#.utf8), sourceID: "hn", json: JSONBody.tape).next == nil)
    }

    @Test func everyBadOptionIsReportedWithItsLineAndColumn() throws {
        let yaml = """
            sources:
              - id: a
                plugin: exec
                options:
                  command: [scripts/missing.py, {x: 1}]
                  env: {"1BAD": x, AGGREGATE_CURSOR: y, TOKEN: "${NOT_SET}"}
                  shell: true
              - id: b
                plugin: exec
                options: {}
            """
        do {
            _ = try ConfigLoader(registry: SourceRegistry([ExecSource.self]), environment: [:])
                .load(text: yaml, file: "Sources.yml", directory: "/nonexistent")
            Issue.record("the configuration loaded")
        } catch {
            #expect(error.issues.map(\.description) == [
                "Sources.yml:5:16: sources[0].options.command: scripts/missing.py is not an executable file (looked at /nonexistent/scripts/missing.py; relative paths start at the Sources.yml folder)",
                "Sources.yml:5:37: sources[0].options.command[1]: expected text (one argument), got a mapping",
                "Sources.yml:6:13: sources[0].options.env.1BAD: \"1BAD\" is not an environment variable name (letters, digits and _)",
                "Sources.yml:6:24: sources[0].options.env.AGGREGATE_CURSOR: AGGREGATE_* variables are set by aggregate itself",
                "Sources.yml:6:52: sources[0].options.env.TOKEN: environment variable NOT_SET is not set (set it, or write ${NOT_SET:-default})",
                "Sources.yml:7:7: sources[0].options.shell: unknown key (known: command, env)",
                "Sources.yml:10:14: sources[1].options.command: is required: the program and its arguments as a list, e.g. [python3, sources/hn.py] (no shell)",
            ])
        }
    }
}
