import FeedSourceTesting
import Foundation
import Testing

/// The front page stays a front page, and no link in the docs leads nowhere.
@Suite struct DocumentationTests {
    static let root = ReadmeSections.root

    /// Markdown files a reader is sent to: the README, docs/, each source's README, the example's.
    static var pages: [URL] {
        let files = FileManager.default
        var pages = [root.appendingPathComponent("README.md")]
        for folder in ["docs", "Plugins", "Examples"] {
            let enumerator = files.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                // A build of the example package keeps its dependencies' docs in its `.build/`.
                if url.lastPathComponent == ".build" {
                    enumerator?.skipDescendants()
                    continue
                }
                if url.pathExtension == "md" { pages.append(url) }
            }
        }
        return pages
    }

    @Test func theREADMEIsAFrontPage() throws {
        let readme = try Data(contentsOf: Self.root.appendingPathComponent("README.md"))
        #expect(readme.count <= 12 * 1024, "README.md is \(readme.count) bytes")
        let text = String(decoding: readme, as: UTF8.self)
        #expect(text.contains("swift run aggregate"))
        #expect(text.contains("swift test"))
    }

    @Test func everyRelativeLinkResolves() throws {
        let link = #/\]\(([^)#\s]+)(#[^)\s]*)?\)/#
        var checked = 0
        for page in Self.pages {
            let text = try String(contentsOf: page, encoding: .utf8)
            for match in text.matches(of: link) {
                let target = String(match.output.1)
                guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                checked += 1
                let resolved = page.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: resolved.path),
                        "\(page.path.replacingOccurrences(of: Self.root.path + "/", with: "")) links to \(target), which does not exist")
            }
        }
        #expect(checked >= 20)
    }
}
