/// A command-line argument a perf suite refused, named with its value.
///
/// Its description is what the suite prints on standard error before it
/// exits with status 2:
///
/// ```
/// --iterations abc: not a whole number
/// --warmup: missing value
/// --iteration: unknown option (did you mean --iterations?)
/// ```
public struct SuiteCommandLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The option concerned (`--iterations`); nil for an argument that is
    /// not an option.
    public var flag: String?
    /// The value given, when there was one.
    public var value: String?
    /// What is wrong, in words.
    public var problem: String

    /// An error about `flag` given `value`.
    public init(flag: String?, value: String?, problem: String) {
        self.flag = flag
        self.value = value
        self.problem = problem
    }

    /// `FLAG VALUE: PROBLEM`; an empty value or one with spaces is quoted.
    public var description: String {
        let shownValue = value.map { $0.isEmpty || $0.contains(where: \.isWhitespace) ? "\"\($0)\"" : $0 }
        let subject = [flag, shownValue].compactMap { $0 }.joined(separator: " ")
        return subject.isEmpty ? problem : "\(subject): \(problem)"
    }
}
