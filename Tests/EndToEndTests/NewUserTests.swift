import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// What a new user hit (issue 39): each as the user would see it.
@Suite struct NewUserTests {
    /// One unset `${VAR}` in a disabled source stopped every command with exit 2,
    /// `--offline` and `validate` included. It is a warning until the source is enabled,
    /// and naming that source says what it needs.
    @Test func aDisabledSourcesUnsetVariableIsNotNeededUntilItIsEnabled() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let yml = try session.workspace.read("Sources.yml") + """
                  - id: later
                    plugin: feed
                    enabled: false
                    url: https://${LATER_HOST}/feed.xml
                    headers: {Authorization: "Bearer ${LATER_TOKEN}"}

                """
            try session.workspace.write("Sources.yml", yml)
            let run = try await session.run()
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdoutLines.count == 3)
            let validate = try await session.workspace.aggregate("validate")
            #expect(validate.status == 0)
            #expect(validate.stderrLines == [
                "Sources.yml:10:10: sources[1].url: environment variable LATER_HOST is not set; the source is disabled, so it is needed only once it is enabled (warning)",
                "Sources.yml:11:30: sources[1].headers.Authorization: environment variable LATER_TOKEN is not set; the source is disabled, so it is needed only once it is enabled (warning)",
                "Sources.yml: ok, 2 sources (1 enabled)",
            ])
            let named = try await session.run("--source", "later")
            #expect(named.status == 2)
            #expect(named.stderrLines == [
                #"aggregate: source "later" is disabled in Sources.yml and needs environment variable LATER_HOST, which is not set; set it to run the source"#,
            ])
        }
    }

    /// A 401 says the credentials were refused and which setting holds them; without any,
    /// that the source sends none.
    @Test func aRefusedKeyNamesTheSettingThatHoldsIt() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify"), extra: ["cabify": "    headers: {X-Api-Key: \"k3y\"}\n    fallback: none\n"]) { session in
            session.server.control.set("cabify", [Fault(status: 401)])
            let run = try await session.run()
            #expect(run.status == 1)
            let url = "\(session.base.absoluteString)/cabify/Products.json"
            #expect(run.stderrLines == [
                "cabify: HTTP 401: the upstream refused the credentials in headers: X-Api-Key of sources[0] in Sources.yml; check them (\(url))",
            ])
            #expect(!run.stderr.contains("k3y"))
        }
    }

    /// `digest --due` with no digest declared did nothing and exited 0, every night.
    @Test func dueWithoutDigestsIsAConfigurationError() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let run = try await session.run("digest", "--due")
            #expect(run.status == 2)
            #expect(run.stderrLines == [
                "aggregate: --due runs the digests declared under digests: in Sources.yml, and it declares none; declare one (docs/digests.md), or run one with --name NAME",
            ])
        }
    }

    /// A `./Sources.yml` comes before `~/.config/aggregate/Sources.yml`; --verbose says so.
    @Test func verboseSaysWhichSourcesFileHidesTheOther() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("cabify")) { session in
            let config = session.workspace.url.appendingPathComponent("xdg/aggregate")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try session.workspace.write("xdg/aggregate/Sources.yml", try session.workspace.read("Sources.yml"))
            let run = try await session.run("--verbose", environment: ["XDG_CONFIG_HOME": session.workspace.url.appendingPathComponent("xdg").path])
            #expect(run.stderrLines.first == "aggregate: reading \(session.workspace.url.path)/Sources.yml; \(config.path)/Sources.yml is not read (pass --config to choose)")
        }
    }

    /// `show` printed a detail's description twice: as the summary, and again as a detail.
    @Test func showPrintsTheDescriptionOnce() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("target")) { session in
            let run = try await session.run("show", "target:1", "--format", "text", environment: ["COLUMNS": "100"])
            #expect(run.status == 0)
            let paragraphs = run.stdout.components(separatedBy: "\n\n")
            let summary = try #require(paragraphs.dropFirst(2).first)
            #expect(run.stdout.components(separatedBy: summary.prefix(60)).count == 2, "\(run.stdout)")
        }
    }
}
