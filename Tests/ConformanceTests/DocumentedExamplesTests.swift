import FeedSourceTesting
import Foundation
import Testing

/// Every `aggregate … | jq …` example in the README and docs/ runs, offline, on the shipped
/// Sources.yml, and gives what it says: jq accepts it and prints something. A filter on
/// `.price.amount` prints nothing of a card without a price (`null < 50` is true in jq,
/// so `select(.price.amount < 50)` alone lets every such card through).
@Suite struct DocumentedExamplesTests {
    struct Example: CustomStringConvertible {
        var page: String
        var aggregate: [String]
        var jq: [String]
        var description: String { "\(page): aggregate \(aggregate.joined(separator: " ")) | jq \(jq.joined(separator: " "))" }
    }

    /// The examples: lines of code (indented, or after `$ `) that pipe aggregate into jq.
    static func examples() throws -> [Example] {
        var examples: [Example] = []
        for page in DocumentationTests.pages {
            let name = page.path.replacingOccurrences(of: DocumentationTests.root.path + "/", with: "")
            for line in try String(contentsOf: page, encoding: .utf8).split(separator: "\n") {
                var code = line.drop { $0 == " " }
                if code.hasPrefix("$ ") { code = code.dropFirst(2) }
                guard code.hasPrefix("aggregate "), let pipe = code.range(of: " | jq ") else { continue }
                // A trailing `# comment` is for people.
                let command = code[pipe.upperBound...]
                guard let jqWords = ShellWords.split(String(command)), let aggregateWords = ShellWords.split(String(code[..<pipe.lowerBound])) else {
                    Issue.record("\(name): cannot read the example \(code)")
                    continue
                }
                examples.append(Example(page: name, aggregate: Array(aggregateWords.dropFirst()), jq: jqWords))
            }
        }
        return examples
    }

    @Test func everyJQExampleRunsAndFiltersWhatItSays() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jq") else {
            print("DocumentedExamplesTests: SKIPPED: jq is not installed (apt-get install jq; .ci/run installs it)")
            return
        }
        let examples = try Self.examples()
        #expect(examples.count >= 8, "found \(examples.count) examples")
        let workspace = try Workspace(sourcesYml: try Workspace.shippedSourcesYml)
        let all = try await workspace.run("--offline", "--all")
        let cards = all.stdoutLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let unpriced = Set(cards.filter { $0["price"] == nil }.compactMap { $0["title"] as? String })
        #expect(!unpriced.isEmpty, "the shipped sources give cards without a price, which the price filters must leave out")

        for example in examples {
            let run = try await workspace.run(arguments: example.aggregate + (example.aggregate.contains("--offline") ? [] : ["--offline"]))
            #expect(run.status == 0, "\(example): aggregate exited \(run.status): \(run.stderr)")
            let jq = try await Self.jq(example.jq, input: run.stdout)
            #expect(jq.status == 0, "\(example): jq exited \(jq.status): \(jq.stderr)")
            #expect(!jq.stdout.isEmpty, "\(example): printed nothing")
            if example.jq.joined(separator: " ").contains(".price.amount <") {
                let printed = jq.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                #expect(printed.allSatisfy { !unpriced.contains($0) }, "\(example): printed cards without a price: \(printed.filter(unpriced.contains))")
            }
        }
    }

    static func jq(_ arguments: [String], input: String) async throws -> Binary.Run {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aggregate-jq-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("cards.jsonl")
        try Data(input.utf8).write(to: inputFile)
        return try await Binary(name: "jq").run(arguments + [inputFile.path], in: directory, absolute: "/usr/bin/jq")
    }
}

/// POSIX shell words of a one-line example: single and double quotes, backslashes, and
/// a `#` comment after a blank. Nil for what it cannot read.
enum ShellWords {
    static func split(_ line: String) -> [String]? {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            switch character {
            case " ", "\t":
                if inWord { words.append(word); word = ""; inWord = false }
            case "#" where !inWord:
                return words
            case "'":
                guard let end = characters.firstIndex(of: "'") else { return nil }
                word += String(characters[..<end])
                characters = characters[(end + 1)...]
                inWord = true
            case "\"":
                while true {
                    guard let next = characters.popFirst() else { return nil }
                    if next == "\"" { break }
                    if next == "\\", let escaped = characters.first, "\"\\$`".contains(escaped) {
                        word.append(escaped)
                        characters = characters.dropFirst()
                    } else {
                        word.append(next)
                    }
                }
                inWord = true
            case "\\":
                guard let escaped = characters.popFirst() else { return nil }
                word.append(escaped)
                inWord = true
            default:
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }
}
