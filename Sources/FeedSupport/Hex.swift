/// Bytes as lowercase hexadecimal, two digits a byte: names made from hashes (a cache
/// key, a kept file). By table: `String(format:)` a byte was most of what naming 500
/// sources cost.
public enum Hex {
    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
    }

    private static let digits = Array("0123456789abcdef".utf8)
}
