import FeedFormats
import Foundation
import SystemPackage

/// Which build of `aggregate` is running: its version, and the executable's path, size and
/// modification time. What one build derived and kept (a mapped page, a parsed
/// Sources.yml) is not used by another: an upgrade or a rebuild may read differently.
package enum BuildIdentity {
    package static let current: String = {
        // /proc/self/exe is a link made when the process started: read the file it names
        // (Bundle.main lists the executable's folder to find it: all of /usr/bin, say).
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? ""
        // swift-system's stat: FileManager's attributes look up the owner's and group's
        // names too (/etc/passwd, or a directory service), on every run.
        guard let stat = try? Stat(FilePath(path)) else { return "aggregate \(AggregateVersion.current) \(path)" }
        return "aggregate \(AggregateVersion.current) \(path) \(stat.size) \(stat.st_mtim.tv_sec).\(stat.st_mtim.tv_nsec)"
    }()
}
