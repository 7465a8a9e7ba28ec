/// 64-bit FNV-1a: a stable, fast, non-cryptographic hash (Swift's `Hasher` is seeded per
/// process) for cache fingerprints, ETags, and ids a source derives when an item has none.
public enum FNV1a {
    /// The hash of no bytes, where every hash starts.
    public static let seed: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of `bytes`; with `seed` (an earlier hash), of those bytes after the earlier ones.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes, seed: UInt64 = seed) -> UInt64 where Bytes.Element == UInt8 {
        var hash = seed
        for byte in bytes { hash = step(hash, byte) }
        return hash
    }

    /// `hash` with one more byte: for a walk that hashes bytes as it reads them.
    @inlinable public static func step(_ hash: UInt64, _ byte: UInt8) -> UInt64 {
        (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    public static func hash(_ text: String) -> UInt64 {
        hash(text.utf8)
    }
}
