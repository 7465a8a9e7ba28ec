#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time the calling thread has used (POSIX `CLOCK_THREAD_CPUTIME_ID`): what a
/// rule's time limit counts, so that a thread waiting for a core is not taken for one
/// that works without end.
enum ThreadCPUTime {
    static func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
