import Foundation

/// The processor and the load the figures were taken on, printed as the
/// first line so that every run names its CPU.
struct Machine {
    /// `lscpu`'s model name, or `/proc/cpuinfo`'s where lscpu is missing.
    var modelName: String
    /// `lscpu`'s CPU family.
    var family: String
    /// `lscpu`'s model number.
    var model: String
    /// Online logical CPUs.
    var cpus: Int

    /// Reads the machine's processor from `lscpu`.
    static func current() -> Machine {
        let fields = lscpuFields()
        return Machine(
            modelName: fields["Model name"] ?? "unknown",
            family: fields["CPU family"] ?? "unknown",
            model: fields["Model"] ?? "unknown",
            cpus: ProcessInfo.processInfo.activeProcessorCount
        )
    }

    /// The 1-, 5- and 15-minute load averages from `/proc/loadavg`, or an
    /// empty list where the file cannot be read.
    static func loadAverages() -> [Double] {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return [] }
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// Prints the machine and the load at this moment as one JSON line.
    func printLine(moment: String) {
        let loads = Self.loadAverages()
        let object: [String: Any] = [
            "cpu": modelName, "cpu_family": family, "cpu_model": model, "cpus": cpus,
            "load_average_1m": loads.first ?? -1, "moment": moment,
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        fflush(nil)
    }

    private static func lscpuFields() -> [String: String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["lscpu"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        var text = ""
        if (try? process.run()) != nil {
            text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
        }
        if text.isEmpty, let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) {
            text = cpuinfo.replacingOccurrences(of: "model name", with: "Model name")
                .replacingOccurrences(of: "cpu family", with: "CPU family")
                .replacingOccurrences(of: "model\t", with: "Model\t")
        }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if fields[key] == nil { fields[key] = value }
        }
        return fields
    }
}
