import FeedCore
import FeedSourceTesting
import FixtureServer
import Foundation
import Testing

/// Secrets planted in every place a user can put one never show up in any output or
/// state file (issue 15, defects 5 and 9).
@Suite(.serialized) struct PlantedSecretsTests {
    static let secrets = ["pw-s3cret", "key-s3cret", "sig-s3cret", "sess-s3cret", "hdr-s3cret", "env-s3cret"]

    @Test func noOutputAndNoStateFileHoldsAPlantedSecret() async throws {
        try await FixtureWorld.withSession(sources: []) { session in
            let base = session.base.absoluteString.replacingOccurrences(of: "http://", with: "http://user:pw-s3cret@")
            let query = "api_key=key-s3cret&X-Amz-Signature=sig-s3cret&session=sess-s3cret"
            try session.workspace.write("Sources.yml", """
                sources:
                  - id: shop
                    plugin: cabify
                    url: \(base)/cabify/Products.json?\(query)
                    headers:
                      x-api-key: hdr-s3cret
                      x-other: ${PLANTED}
                  - id: broken
                    plugin: cabify
                    url: \(base)/nowhere/Products.json?\(query)
                    retries: 1
                    fallback: none

                """)
            let environment = ["PLANTED": "env-s3cret"]
            var outputs: [String] = []
            for arguments in [["--verbose"], ["--format", "text"], ["--format", "csv"], ["show", "shop:MUG", "--verbose"],
                              ["sources"], ["sources", "--format", "text"], ["validate"], ["digest", "--name", "daily", "--verbose"],
                              ["record", "shop", "--into", "recorded"]] {
                let run = try await session.workspace.run(arguments: arguments, environment: environment)
                outputs.append(run.stdout + run.stderr)
            }
            #expect(outputs[0].contains("shop:MUG"), "the planted source must work, or the test proves nothing")
            #expect(outputs[0].contains("broken: HTTP 404"))
            var files = [session.workspace.url.appendingPathComponent("Sources.yml")]
            let enumerator = FileManager.default.enumerator(at: session.workspace.url.appendingPathComponent("state"),
                                                            includingPropertiesForKeys: nil)
            while let file = enumerator?.nextObject() as? URL { files.append(file) }
            let stateBytes = try files.dropFirst().map { try Data(contentsOf: $0) }
            #expect(stateBytes.count >= 2)
            for secret in Self.secrets {
                for (index, output) in outputs.enumerated() {
                    #expect(!output.contains(secret), "output \(index) holds \(secret)")
                }
                for (file, bytes) in zip(files.dropFirst(), stateBytes) {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file.lastPathComponent) holds \(secret)")
                }
            }
        }
    }

    /// Ids are one path segment: `../` cannot climb out of a detail URL (defect 10).
    @Test func idsAreEncodedIntoDetailURLs() async throws {
        try await FixtureWorld.withSession(sources: FixtureWorld.only("dishwashers")) { session in
            let run = try await session.run("show", "dishwashers:../../x?y#z")
            #expect(run.status == 1)
            #expect(session.requests.allSatisfy { !$0.path.contains("..") && $0.query == nil })
        }
    }
}
