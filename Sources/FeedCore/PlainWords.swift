import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Any error as one plain sentence for stderr: our own errors as they describe
/// themselves, Foundation's file errors as the system's reason (`Permission denied`,
/// `Not a directory`), never an `Error Domain=… UserInfo={…}` dump.
public enum PlainWords {
    public static func describe(_ error: any Error) -> String {
        if error is SourceError || error is ConfigIssues || error is ConfigIssue {
            return "\(error)"
        }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(bridged.code)))
        }
        if bridged.domain == NSCocoaErrorDomain {
            if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
                return String(cString: strerror(Int32(underlying.code)))
            }
            switch CocoaError.Code(rawValue: bridged.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
            case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "no space left on the device"
            case .fileWriteVolumeReadOnly: return "read-only file system"
            case .fileReadCorruptFile, .fileReadInapplicableStringEncoding: return "the file cannot be read as text"
            default: return "cannot be written (check that every parent is a directory you may write to)"
            }
        }
        return "\(error)"
    }
}
