import ArgumentParser
import FeedConfig
import Foundation
import SystemPackage

/// `aggregate init [--demo]`: a Sources.yml to start from, where `add` would make one.
struct InitCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a commented Sources.yml to start from (feeds only; --demo for the shops).",
        discussion: """
            Written to --config, else $XDG_CONFIG_HOME/aggregate/Sources.yml (~/.config/aggregate/), where every \
            command looks after ./Sources.yml. An existing file is never replaced. Then `aggregate add URL` or \
            `aggregate import FILE.opml`.
            """)

    @Flag(help: "The demo: the shops, LTK and the reqres people, with recorded snapshots offline.")
    var demo = false

    @OptionGroup var common: CommonOptions

    /// What a feed list starts as: the file `add` makes, with an example left commented out.
    static let feedsOnly = SourcesFile.newFileText + """
          # - id: my-blog                      # lowercase letters, digits and -
          #   plugin: feed
          #   url: https://blog.example.org/feed.xml
          #   options: {tags: [Friends]}       # a folder in the reader

        """

    func run(in context: CommandContext) async throws {
        let loader = ConfigLoader(registry: context.registry)
        guard let path = common.config ?? loader.candidates().last else { throw ExitStatus.usage.code }
        guard !FileManager.default.fileExists(atPath: path) else {
            throw common.usage("\(path) already exists; nothing was written (`aggregate add URL` adds to it)")
        }
        let text: String
        if demo {
            guard let demoText = context.demo else { throw common.usage("this build has no demo; run `aggregate init` for a feed list") }
            text = demoText
        } else {
            text = Self.feedsOnly
        }
        do {
            try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                                    withIntermediateDirectories: true)
            // Never over a file made meanwhile: created here or not at all.
            let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                                               permissions: [.ownerReadWrite, .groupRead, .otherRead])
            _ = try file.closeAfter { try file.writeAll(text.utf8) }
        } catch {
            Terminal.writeError("aggregate: cannot write \(path): \(error)")
            throw ExitStatus.failed.code
        }
        Terminal.writeError("aggregate: wrote \(path)" + (demo ? " (the demo: run `aggregate` to see its cards)" : "; add feeds with `aggregate add URL` or `aggregate import FILE.opml`"))
    }
}
