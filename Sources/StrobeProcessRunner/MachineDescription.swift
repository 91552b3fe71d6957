import Foundation
import StrobeResults

extension RunMetadata {
    /// Metadata of a run starting now on this machine, for `suite`.
    /// The run id is ``newRunID()`` unless one is given.
    public static func current(
        suite: String, buildConfiguration: String, tags: [String: String], runID: String? = nil, round: Int? = nil
    ) -> RunMetadata {
        RunMetadata(
            suite: suite, gitCommit: MachineDescription.gitCommit(), host: ProcessInfo.processInfo.hostName,
            os: MachineDescription.operatingSystem(), cpuModel: MachineDescription.cpuModel(),
            coreCount: ProcessInfo.processInfo.activeProcessorCount, buildConfiguration: buildConfiguration,
            timestamp: Int64(Date().timeIntervalSince1970 * 1e9), tags: tags, runID: runID ?? newRunID(), round: round)
    }

    /// A fresh id for this process's run: host, process id, start time and
    /// random bits, so that ids never repeat across machines or reboots.
    public static func newRunID() -> String {
        let host = ProcessInfo.processInfo.hostName.prefix(24)
        let stamp = UInt64(Date().timeIntervalSince1970 * 1e3)
        return "\(host)-\(getpid())-\(stamp)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    }
}

/// Facts about the machine and the checkout, for run metadata.
package enum MachineDescription {
    /// `GITHUB_SHA`, else `git rev-parse HEAD` in the working directory, else "".
    static func gitCommit() -> String {
        if let sha = ProcessInfo.processInfo.environment["GITHUB_SHA"], !sha.isEmpty { return sha }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "rev-parse", "HEAD"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return "" }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `PRETTY_NAME` of /etc/os-release with the kernel release, or the
    /// platform's version string.
    static func operatingSystem() -> String {
        var name = ProcessInfo.processInfo.operatingSystemVersionString
        if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) {
            for line in release.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                name = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        var system = utsname()
        uname(&system)
        let kernel = withUnsafeBytes(of: &system.release) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return kernel.isEmpty ? name : "\(name), kernel \(kernel)"
    }

    /// The CPU model from /proc/cpuinfo, or "".
    static func cpuModel() -> String { processorFields()["model name"] ?? "" }

    /// The fields of the first processor in /proc/cpuinfo (`model name`,
    /// `cpu family`, `model`, …), which name them all; empty where the file
    /// is missing.
    package static func processorFields() -> [String: String] {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return [:] }
        var fields: [String: String] = [:]
        for line in info.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            if fields[key] == nil {
                fields[key] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return fields
    }
}
