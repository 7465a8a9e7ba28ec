#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Response bodies that are read-only mappings of files (the cache's large bodies).
///
/// A decode reads such a body once, front to back; the pages it has passed can be given
/// back to the system, which reads them from the file again should anything touch them
/// later. Without that, a 40 MB body counts 40 MB in the process from its scan until the
/// last of its cards is printed (README, "Performance").
///
/// Only ranges registered here are ever given back: dropping the pages of ordinary memory
/// would lose its contents. Whoever maps a file registers the mapping and unregisters it
/// before unmapping it, so an address reused by a later allocation is never taken for a
/// mapping.
public enum MappedBodies {
    private static let mappings = Mutex<[ClosedRange<UInt>]>([])

    /// Registers `bytes`, which must be a private, read-only mapping of a file that does
    /// not change while it is mapped.
    public static func register(_ bytes: UnsafeRawBufferPointer) {
        guard let range = span(bytes) else { return }
        mappings.withLock { $0.append(range) }
    }

    /// Unregisters `bytes`; call it before the mapping is removed.
    public static func unregister(_ bytes: UnsafeRawBufferPointer) {
        guard let range = span(bytes) else { return }
        mappings.withLock { list in
            if let index = list.firstIndex(of: range) { list.remove(at: index) }
        }
    }

    /// Whether `bytes` lie wholly inside one registered mapping.
    static func contains(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let range = span(bytes) else { return false }
        return mappings.withLock { list in
            list.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
        }
    }

    private static func span(_ bytes: UnsafeRawBufferPointer) -> ClosedRange<UInt>? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        let start = UInt(bitPattern: base)
        return start...(start + UInt(bytes.count) - 1)
    }
}

/// The pages of one body that a front-to-back read has left behind, given back a
/// megabyte at a time (a quarter of a megabyte behind the reader, so the record being
/// read keeps its pages). Does nothing for a body that is not a registered mapping.
struct PagesBehind {
    /// How far the reader goes between two releases.
    static let step = 1 << 20
    /// What stays mapped behind the reader.
    static let lag = 256 << 10

    private let base: UInt?
    private let end: UInt
    private let pageMask: UInt
    /// Everything below this address has been given back (or is not ours to give).
    private var released: UInt

    init(_ bytes: UnsafeRawBufferPointer) {
        let start = UInt(bitPattern: bytes.baseAddress)
        pageMask = UInt(getpagesize()) - 1
        #if os(Linux)
        base = MappedBodies.contains(bytes) ? start : nil
        #else
        base = nil
        #endif
        end = start + UInt(bytes.count)
        // A slice of a mapping may start inside a page: that page is left alone.
        released = (start + pageMask) & ~pageMask
    }

    /// Whether releasing can do anything for this body.
    var isActive: Bool { base != nil }

    /// Gives back the whole pages that end `lag` bytes or more before `offset`.
    mutating func release(before offset: Int) {
        guard let base, offset > Self.lag else { return }
        giveBack(upTo: min(base + UInt(offset - Self.lag), end))
    }

    /// Gives back every whole page: the read is over.
    mutating func releaseAll() {
        guard base != nil else { return }
        giveBack(upTo: end)
    }

    private mutating func giveBack(upTo address: UInt) {
        let limit = address & ~pageMask
        guard limit > released else { return }
        #if os(Linux)
        _ = madvise(UnsafeMutableRawPointer(bitPattern: released), Int(limit - released), MADV_DONTNEED)
        #endif
        released = limit
    }
}
