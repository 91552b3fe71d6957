import Foundation
import StrobeProcessRunner
import StrobeResults

/// The processor and the load the figures were taken on, printed as the
/// first and last lines so that every run names its CPU.
struct Machine {
    /// The processor's model name, as the runner records it in a run's
    /// metadata (`model name` of `/proc/cpuinfo`).
    var processor: String
    /// Online logical CPUs.
    var cpus: Int

    /// This machine.
    static func current() -> Machine {
        Machine(
            processor: RunMetadata.current(suite: "SpanComparison", buildConfiguration: "release", tags: [:]).cpuModel,
            cpus: ProcessInfo.processInfo.activeProcessorCount)
    }

    /// The 1, 5 and 15 minute load averages, from `/proc/loadavg`.
    static func loadAverages() -> [Double] {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return [] }
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// Prints the machine and its 1-minute load as a JSON line, `moment`
    /// saying when (`start`, `end`).
    func printLine(moment: String) {
        let loads = Self.loadAverages()
        let object: [String: Any] = [
            "cpu": processor, "cpus": cpus,
            "load_average_1m": loads.first ?? -1, "moment": moment,
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        fflush(nil)
    }
}
