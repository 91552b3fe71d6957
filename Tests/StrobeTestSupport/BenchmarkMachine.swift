import Foundation

/// The processor a benchmark ran on, as `lscpu` names it (model name, CPU
/// family, model), read from `/proc/cpuinfo`: figures from machines of one
/// kind differ by CPU model, so every benchmark prints it beside them.
public struct BenchmarkMachine: Sendable {
    /// The model name (`AMD EPYC`), or `unknown`.
    public var modelName: String
    /// The CPU family (`25`), or `unknown`.
    public var family: String
    /// The model number within the family (`17`), or `unknown`.
    public var model: String

    /// The processor of this machine.
    public static var current: BenchmarkMachine {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        var fields: [String: String] = [:]
        for line in info.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            // The first processor's lines name them all.
            if fields[key] == nil {
                fields[key] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return BenchmarkMachine(
            modelName: fields["model name"] ?? "unknown", family: fields["cpu family"] ?? "unknown",
            model: fields["model"] ?? "unknown")
    }
}
