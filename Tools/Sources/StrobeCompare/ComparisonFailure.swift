/// Why a comparison could not go on: a process that failed or could not be
/// started, a results directory that cannot be used, results that cannot be
/// read. The message names the command, the file or the flag.
public struct ComparisonFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one or more lines.
    public var message: String

    /// A failure saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
