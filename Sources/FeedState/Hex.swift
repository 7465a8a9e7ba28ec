/// Bytes as lowercase hex digits, two a byte: digests and tokens as they are stored and
/// sent. Written out by hand because `String(format: "%02x")` goes through Foundation's
/// formatter a byte at a time, which cost the feed job's daily run about half as much
/// again as hashing the bodies.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex.
    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
