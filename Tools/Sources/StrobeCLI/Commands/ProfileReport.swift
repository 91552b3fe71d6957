import Foundation
import StrobeReader
import StrobeToolFormatting

/// `strobe summarize --profile`: the functions that took the CPU, by self
/// and inclusive samples, over the whole trace and, with `--interval`,
/// within the instances of one interval name (the samples of each
/// instance's thread between its begin and end).
struct ProfileReport: Encodable {
    struct Row: Encodable {
        var function: String
        var selfSamples: Int
        var selfPercent: Double
        var inclusiveSamples: Int
        var inclusivePercent: Double
    }

    struct Section: Encodable {
        /// `whole trace` or `interval NAME`.
        var scope: String
        var samples: Int
        var instances: Int?
        var functions: [Row]
    }

    var trace: String
    var method: String?
    var frequency: Int?
    var samples: Int
    var lostSamples: Int?
    var unresolvedSamples: Int
    var fallbackReason: String?
    var unsampledThreads: Int
    var samplerFailure: String?
    var sections: [Section]

    /// The report, or bad input when the trace holds no CPU sample or no
    /// finished instance of the interval named.
    static func make(
        path: String, trace: ParsedTrace, profile: CPUProfile, interval: String?, top: Int
    ) throws(CommandFailure) -> ProfileReport {
        guard !profile.isEmpty else {
            throw .badInput(
                "\(path): no CPU samples in the trace (record with configuration.cpuProfile or "
                    + "STROBE_CPU_PROFILE=999hz)"
            )
        }
        var sections = [section("whole trace", profile, profile.samples, instances: nil, top: top)]
        if let interval {
            let instances = try instances(of: interval, in: trace, path: path)
            let inside = profile.samples(within: instances)
            sections.append(section("interval \"\(interval)\"", profile, inside, instances: instances.count, top: top))
        }
        return ProfileReport(
            trace: path, method: profile.method, frequency: profile.frequency, samples: profile.samples.count,
            lostSamples: profile.lostSamples, unresolvedSamples: profile.unresolvedSamples,
            fallbackReason: profile.fallbackReason, unsampledThreads: profile.unsampledThreads,
            samplerFailure: profile.samplerFailure, sections: sections)
    }

    /// The finished instances of `interval` on a thread, whose samples
    /// `--interval` keeps; bad input when there is none.
    static func instances(of interval: String, in trace: ParsedTrace, path: String) throws(CommandFailure) -> [Interval]
    {
        let instances = trace.intervals(named: interval).filter { $0.tid != nil && $0.end != nil }
        guard !instances.isEmpty else {
            throw .badInput("--interval \"\(interval)\": no finished interval of that name on a thread in \(path)")
        }
        return instances
    }

    private static func section(
        _ scope: String, _ profile: CPUProfile, _ samples: [CPUProfile.Sample], instances: Int?, top: Int
    ) -> Section {
        let rows = profile.topFunctions(of: samples, limit: top).map {
            Row(
                function: $0.function, selfSamples: $0.selfSamples, selfPercent: $0.selfShare * 100,
                inclusiveSamples: $0.inclusiveSamples, inclusivePercent: $0.inclusiveShare * 100)
        }
        return Section(scope: scope, samples: samples.count, instances: instances, functions: rows)
    }

    func renderText() -> String {
        var text = "\(trace): \(samples) CPU samples"
        if let frequency { text += " at \(frequency) Hz" }
        if let method { text += " (\(method))" }
        if let lostSamples { text += ", \(lostSamples) lost" }
        if unresolvedSamples > 0 { text += ", \(unresolvedSamples) unresolved" }
        text += "\n"
        if let fallbackReason { text += "kernel sampling not used: \(fallbackReason)\n" }
        if unsampledThreads > 0 {
            text += "\(unsampledThreads) threads not sampled"
            text += samplerFailure.map { " (first: \($0))\n" } ?? "\n"
        }
        for section in sections {
            text += "\nTop functions, \(section.scope): \(section.samples) samples"
            if let instances = section.instances { text += " in \(instances) instances" }
            text += "\n"
            var table = TextTable(
                header: ["self", "self %", "incl", "incl %", "function"], rightAligned: [0, 1, 2, 3])
            for row in section.functions {
                table.rows.append([
                    String(row.selfSamples), Self.percent(row.selfPercent), String(row.inclusiveSamples),
                    Self.percent(row.inclusivePercent), row.function,
                ])
            }
            text += table.render() + "\n"
        }
        return text
    }

    private static func percent(_ value: Double) -> String {
        String(format: "%.1f%%", value)
    }
}
