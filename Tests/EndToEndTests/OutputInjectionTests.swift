import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Upstream text that would drive a terminal or a spreadsheet is printed inert (issue 28,
/// defect 11): control characters never reach a terminal, formulas never reach a cell.
@Suite struct OutputInjectionTests {
    /// A title that retitles the terminal and turns it red, a tag that clears the screen,
    /// and a name that is a spreadsheet formula.
    static let hostile = #"{"products":[{"code":"EVIL","name":"Mug\u001b]0;pwned\u0007 \u001b[31mred\u009b2J","price":7.5},"#
        + #"{"code":"=1+1","name":"=HYPERLINK(\"http://evil.example\",\"click\")","price":5}]}"#

    @Test func textOutputCarriesNoControlCharacters() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            session.server.control.set("cabify", [Fault(body: Self.hostile)])
            let run = try await session.run("--format", "text", environment: ["COLUMNS": "100", "NO_COLOR": "1"])
            #expect(run.status == 0)
            #expect(!run.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) })
            #expect(run.stdoutLines.first?.hasPrefix("cabify  Mug]0;pwned [31mred2J") == true, "\(run.stdout)")
            let show = try await session.run("show", "cabify:EVIL", "--format", "text", environment: ["COLUMNS": "100"])
            #expect(show.status == 0)
            #expect(show.stdoutLines.first == "Mug]0;pwned [31mred2J")
        }
    }

    @Test func csvAndTSVCellsThatAreFormulasAreNeutralised() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            session.server.control.set("cabify", [Fault(body: Self.hostile)])
            let csv = try await session.run("--format", "csv")
            #expect(csv.status == 0)
            #expect(csv.stdout.contains("\r\ncabify:=1+1,cabify,item,\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\",,5,EUR,"),
                    "\(csv.stdout)")
            let tsv = try await session.run("--format", "tsv")
            #expect(tsv.stdoutLines.last?.hasPrefix("cabify:=1+1\tcabify\titem\t'=HYPERLINK(\"http://evil.example\",\"click\")\t\t5\tEUR") == true,
                    "\(tsv.stdout)")
        }
    }

    /// What a failing upstream says reaches stderr through the same filter: a 403 body that
    /// turns the terminal red and retitles it prints as inert text (issue 39, item 12).
    @Test func anErrorBodyOnStderrCarriesNoControlCharacters() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            session.server.control.set("cabify", [Fault(status: 403, body: "\u{1B}[31mdenied\u{1B}]0;pwned\u{07}\r\nX-Injected: yes")])
            let run = try await session.run("--verbose")
            #expect(run.status == 1)
            #expect(!run.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) }, "\(run.stderr)")
            #expect(!run.stderrLines.contains { $0.hasPrefix("X-Injected") })
        }
    }
}
