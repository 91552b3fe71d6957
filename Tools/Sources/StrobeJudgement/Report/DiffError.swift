import StrobeResults

/// Why samples could not be loaded or compared; `strobe diff` exits with
/// status 2 on these.
public enum DiffError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A results file that could not be read, with the `errno` of the
    /// system call that failed, when one did.
    case resultsFile(ResultsFileError)
    /// Any other input that is wrong: a CSV file, a policy, a decisions
    /// file, a missing path, or (`path` "") the comparison itself.
    case input(path: String, problem: String)

    /// A problem with the file at `path` ("" when it is not one file's).
    public init(path: String, problem: String) {
        self = .input(path: path, problem: problem)
    }

    /// `FILE: PROBLEM`, or the problem alone, then ` (errno N)` when a system
    /// call failed.
    public var description: String {
        switch self {
        case .resultsFile(let error): error.description
        case .input(let path, let problem): path.isEmpty ? problem : "\(path): \(problem)"
        }
    }
}
