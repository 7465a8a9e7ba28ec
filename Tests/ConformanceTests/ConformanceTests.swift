import FeedCore
import FeedSourceTesting
import FixtureKit
import Foundation
import FixtureCatalogue
import SourceCatalogue
import Testing

/// One catalogue entry, named after its source module in test output.
struct CatalogueEntry: CustomTestStringConvertible, Sendable {
    let source: any BuiltinSource.Type
    var module: String { String(reflecting: source).split(separator: ".").first.map(String.init) ?? "\(source)" }
    var testDescription: String { module }
}

/// The conformance suite over every source in the catalogue: `swift test --filter Conformance`.
@Suite struct Conformance {
    static let entries = FixtureCatalogue.sources.map(CatalogueEntry.init)

    /// Every source of the catalogue has its fixture route (its `<Name>Fixture` module is
    /// linked into the fixture catalogue), so the suite and the fixture world miss none.
    @Test func everySourceHasAFixtureRoute() {
        #expect(FixtureCatalogue.withoutFixture == [])
        #expect(FixtureCatalogue.sources.count == SourceCatalogue.sources.count)
    }

    @Test(arguments: entries)
    func keepsTheSourceContract(_ entry: CatalogueEntry) async throws {
        try await FeedSourceTesting.Conformance.check(entry.source)
    }

    /// Every option a source accepts is documented in its README section.
    @Test(arguments: entries)
    func documentsEveryOption(_ entry: CatalogueEntry) throws {
        let section = try ReadmeSections.section(for: entry.source.plugin)
        for option in FeedSourceTesting.Conformance.acceptedOptions(entry.source) {
            #expect(section.contains("`\(option)`"), "README section for \(entry.source.plugin) does not document option `\(option)`")
        }
    }
}

/// DESIGN.md's first rule, checked on the tree: a source module imports FeedCore and the
/// helpers of FeedSupport (and Foundation, FoundationXML among it) only, never the engine
/// or another source. The exceptions are the libraries that reach an upstream: `exec` runs
/// programs through ChildProcess, `html` reads pages through HTMLQuery. A module's `Fixture/`
/// (its route for the fixture server, not in `aggregate`) imports the module and FixtureKit too.
@Suite struct ModuleRules {
    @Test func sourceModulesImportFeedCoreOnly() throws {
        let plugins = ReadmeSections.root.appendingPathComponent("Plugins")
        let files = FileManager.default.enumerator(at: plugins, includingPropertiesForKeys: nil)
        var checked = 0
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift", !file.pathComponents.contains("Tests") else { continue }
            checked += 1
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                let module = line.split(separator: " ").last.map(String.init) ?? ""
                let pluginName = file.pathComponents.drop { $0 != "Plugins" }.dropFirst().first ?? ""
                let allowed = (file.pathComponents.contains("Exec") ? ["ChildProcess"] : [])
                    + (file.pathComponents.contains("WebPage") ? ["HTMLQuery"] : [])
                    + (file.pathComponents.contains("Fixture") ? [pluginName, "FixtureKit"] : [])
                #expect((["FeedCore", "FeedSupport", "Foundation", "FoundationXML"] + allowed).contains(module),
                        "\(file.lastPathComponent) imports \(module)")
            }
        }
        #expect(checked >= SourceCatalogue.sources.count * 2)
    }
}
