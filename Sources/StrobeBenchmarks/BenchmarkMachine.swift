import Foundation
import StrobeProcessRunner

/// The processor a benchmark ran on, as `lscpu` names it (model name, CPU
/// family, model), read from `/proc/cpuinfo`: figures from machines of one
/// kind differ by CPU model, so every benchmark prints it beside them.
struct BenchmarkMachine: Sendable {
    /// The model name (`AMD EPYC`), or `unknown`.
    var modelName: String
    /// The CPU family (`25`), or `unknown`.
    var family: String
    /// The model number within the family (`17`), or `unknown`.
    var model: String

    /// The processor of this machine.
    static var current: BenchmarkMachine {
        let fields = MachineDescription.processorFields()
        return BenchmarkMachine(
            modelName: fields["model name"] ?? "unknown", family: fields["cpu family"] ?? "unknown",
            model: fields["model"] ?? "unknown")
    }
}
