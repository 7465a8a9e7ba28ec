import FeedCore
import Foundation

/// A whole-source time limit: every page, retry and backoff of the live upstream
/// together. The work is cancelled at the instant (AsyncHTTPClient stops the request).
struct Deadline: Sendable {
    let instant: ContinuousClock.Instant
    /// The configured `deadline`, for the message.
    let seconds: Double

    init(seconds: Double, from start: ContinuousClock.Instant = .now) {
        self.seconds = seconds
        self.instant = start.advanced(by: .milliseconds(Int64((seconds * 1000).rounded())))
    }

    /// Runs `body`, or throws ``SourceError/deadline(seconds:)`` once the instant passes.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard ContinuousClock.now < instant else { throw SourceError.deadline(seconds: seconds) }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try? await Task.sleep(until: instant, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw SourceError.deadline(seconds: seconds)
            }
            return value
        }
    }
}
