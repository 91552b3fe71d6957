/// A problem in a trace file, with where it is.
///
/// The description reads `FILE: byte OFFSET: PROBLEM`, so a person can find
/// the spot with a hex viewer.
public struct TraceReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or the name given to bytes read from memory).
    public var file: String
    /// The byte offset where the problem starts.
    public var offset: Int
    /// What is wrong.
    public var problem: String

    /// A problem at `offset` in `file`.
    public init(file: String, offset: Int, problem: String) {
        self.file = file
        self.offset = offset
        self.problem = problem
    }

    /// `FILE: byte OFFSET: PROBLEM`.
    public var description: String { "\(file): byte \(offset): \(problem)" }
}
