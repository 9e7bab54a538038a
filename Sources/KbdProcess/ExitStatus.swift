/// Exit codes scripts can rely on (sysexits.h numbers), shared by `kbd-commandd`
/// and `kbd-commandd-daemon`.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let dataError: Int32 = 65
    public static let noInput: Int32 = 66
    public static let configError: Int32 = 78
}

/// A runtime failure: printed as `Error: <message>` on stderr, then exit with `code`.
public struct CLIFailure: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var code: Int32
    public var description: String { message }

    public init(message: String, code: Int32) {
        self.message = message
        self.code = code
    }
}
