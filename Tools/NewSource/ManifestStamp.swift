import Foundation

/// The `// Source folders:` line of Package.swift. SwiftPM re-reads a manifest only when
/// its text changes, so after adding a folder the line must change too.
enum ManifestStamp {
    static let prefix = "// Source folders: "

    static func update(root: URL) throws {
        let manifest = root.appendingPathComponent("Package.swift")
        let plugins = root.appendingPathComponent("Plugins")
        let files = FileManager.default
        let folders = try files.contentsOfDirectory(atPath: plugins.path).sorted().compactMap { name -> String? in
            let entries = (try? files.contentsOfDirectory(atPath: plugins.appendingPathComponent(name).path)) ?? []
            guard entries.contains(where: { $0.hasSuffix(".swift") }) else { return nil }
            let snapshots = (try? files.contentsOfDirectory(atPath: plugins.appendingPathComponent("\(name)/Snapshots").path)) ?? []
            return "\(name)(\(snapshots.filter { $0.hasSuffix(".json") }.count))"
        }
        var lines = try String(contentsOf: manifest, encoding: .utf8).components(separatedBy: "\n")
        guard let index = lines.firstIndex(where: { $0.hasPrefix(prefix) }) else {
            throw ScaffoldError("Package.swift has no \"\(prefix)\" line; add one so SwiftPM sees the new folder")
        }
        lines[index] = prefix + folders.joined(separator: " ")
        try Data(lines.joined(separator: "\n").utf8).write(to: manifest)
    }
}
