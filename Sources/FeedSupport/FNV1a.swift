/// 64-bit FNV-1a: a stable, fast, non-cryptographic hash (Swift's `Hasher` is seeded per
/// process) for cache fingerprints, ETags, and ids a source derives when an item has none.
public enum FNV1a {
    /// The hash of `bytes`; with `seed` (an earlier hash), of those bytes after the earlier ones.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 where Bytes.Element == UInt8 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    public static func hash(_ text: String) -> UInt64 {
        hash(text.utf8)
    }
}
