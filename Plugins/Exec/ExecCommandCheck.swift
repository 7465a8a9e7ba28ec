import FeedCore
import Foundation

/// Load-time checks of an exec `command`, so a typo is a config error with its line and
/// column, not a failure at run time.
enum ExecCommandCheck {
    /// Why `program` cannot be run, or nil: a path (with a `/`) must exist relative to the
    /// Sources.yml folder; a bare name must be on `PATH`.
    static func problem(_ program: String, directory: URL, environment: [String: String]) -> String? {
        let files = FileManager.default
        if program.contains("/") {
            let path = program.hasPrefix("/") ? program : directory.appendingPathComponent(program).standardizedFileURL.path
            return files.isExecutableFile(atPath: path)
                ? nil : "\(program) is not an executable file (looked at \(path); relative paths start at the Sources.yml folder)"
        }
        let searched = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        let found = searched.contains { files.isExecutableFile(atPath: "\($0)/\(program)") }
        return found ? nil : "\(program) is not on PATH; install it or give its path"
    }

    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.first, !first.isNumber else { return false }
        return name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }

    /// A short stable hash (FNV-1a, 64 bits) of argv; Swift's `Hasher` is seeded per process.
    static func fingerprint(_ command: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in command.joined(separator: "\u{0}").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
