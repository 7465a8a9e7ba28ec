import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory new-source NAME [--paging none|page|offset|cursor]`
///
/// Creates `Plugins/<Name>/` (with its README), a source module that builds, passes its
/// tests and the conformance suite, and prints example cards with `--offline`; adds its
/// line to Package.swift's `sourceModules`, its import and entry to the catalogue, and a
/// disabled entry to Sources.yml. Nothing else is touched.
@main
struct NewSource: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let pagingOption = extractor.extractOption(named: "paging").last ?? "page"
        let names = extractor.remainingArguments
        guard names.count == 1, let name = names.first else {
            throw ScaffoldError("usage: swift package --allow-writing-to-package-directory new-source NAME [--paging none|page|offset|cursor]")
        }
        guard let paging = Paging(rawValue: pagingOption) else {
            throw ScaffoldError("--paging must be none, page, offset or cursor, got \"\(pagingOption)\"")
        }
        let scaffold = try Scaffold(name: name, paging: paging, root: context.package.directoryURL)
        try scaffold.write()
        print(scaffold.summary)
    }
}

/// A plain-words failure: SwiftPM prints it and exits non-zero.
struct ScaffoldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The module to create and every file it touches.
struct Scaffold {
    let name: String
    let id: String
    let paging: Paging
    let root: URL

    init(name: String, paging: Paging, root: URL) throws {
        guard let first = name.unicodeScalars.first, CharacterSet.uppercaseLetters.contains(first),
              name.unicodeScalars.allSatisfy({ $0.isASCII && CharacterSet.alphanumerics.contains($0) }) else {
            throw ScaffoldError("NAME must be UpperCamelCase letters and digits (e.g. HackerNews), got \"\(name)\"")
        }
        self.name = name
        self.id = name.lowercased()
        self.paging = paging
        self.root = root
        if FileManager.default.fileExists(atPath: folder.path) {
            throw ScaffoldError("Plugins/\(name) already exists; choose another NAME or remove the folder")
        }
        let sources = try String(contentsOf: root.appendingPathComponent("Sources.yml"), encoding: .utf8)
        if sources.contains("- id: \(id)\n") || sources.contains("plugin: \(id)\n") {
            throw ScaffoldError("Sources.yml already has a source or plugin \"\(id)\"")
        }
    }

    var folder: URL { root.appendingPathComponent("Plugins/\(name)") }

    func write() throws {
        let template = Template(name: name, id: id, paging: paging)
        for (path, text) in template.files {
            let file = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        try declare()
        try register()
        try append(to: "Sources.yml", template.sourcesEntry)
    }

    /// One line in Package.swift's `sourceModules` list, kept in name order.
    func declare() throws {
        let file = root.appendingPathComponent("Package.swift")
        var lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
        guard let listStart = lines.firstIndex(where: { $0.hasPrefix("let sourceModules") }),
              let listEnd = lines[listStart...].firstIndex(where: { $0 == "]" }) else {
            throw ScaffoldError("cannot find the `let sourceModules` list in Package.swift")
        }
        let line = "    SourceModule(\"\(name)\"),"
        let next = lines[(listStart + 1)..<listEnd].firstIndex { $0 > line } ?? listEnd
        lines.insert(line, at: next)
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
    }

    /// One import and one line in the catalogue.
    func register() throws {
        let file = root.appendingPathComponent("Sources/SourceCatalogue/SourceCatalogue.swift")
        var lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
        guard let lastImport = lines.lastIndex(where: { $0.hasPrefix("import ") }),
              let listStart = lines.firstIndex(where: { $0.contains("static let sources") }),
              let listEnd = lines[listStart...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "]" }) else {
            throw ScaffoldError("cannot find the source list in Sources/SourceCatalogue/SourceCatalogue.swift")
        }
        lines.insert("        \(name)Source.self,", at: listEnd)
        lines.insert("import \(name)", at: lastImport + 1)
        try Data(lines.joined(separator: "\n").utf8).write(to: file)

        // Its fixture route joins the fixture server's catalogue.
        let fixtures = root.appendingPathComponent("Sources/FixtureCatalogue/FixtureCatalogue.swift")
        var fixtureLines = try String(contentsOf: fixtures, encoding: .utf8).components(separatedBy: "\n")
        guard let lastFixtureImport = fixtureLines.lastIndex(where: { $0.hasPrefix("import ") }) else {
            throw ScaffoldError("cannot find the imports of Sources/FixtureCatalogue/FixtureCatalogue.swift")
        }
        fixtureLines.insert("import \(name)Fixture", at: lastFixtureImport + 1)
        try Data(fixtureLines.joined(separator: "\n").utf8).write(to: fixtures)
    }

    func append(to path: String, _ text: String) throws {
        let file = root.appendingPathComponent(path)
        var contents = try String(contentsOf: file, encoding: .utf8)
        if !contents.hasSuffix("\n") { contents += "\n" }
        try Data((contents + text).utf8).write(to: file)
    }

    var summary: String {
        """
        Created Plugins/\(name)/ (\(paging.rawValue) paging) with its README.md, declared it in \
        Package.swift's sourceModules, registered \(name)Source in \
        Sources/SourceCatalogue/SourceCatalogue.swift (its fixture route in Sources/FixtureCatalogue), and added a disabled "\(id)" entry to Sources.yml.
        Try it:  swift run aggregate --source \(id) --offline
        Test it: swift test --filter \(name)Tests
        Then: replace the example wire model, mapping and snapshots with the real upstream's \
        (record them with: swift run aggregate record \(id) --into Plugins/\(name)/Snapshots).
        """
    }
}
