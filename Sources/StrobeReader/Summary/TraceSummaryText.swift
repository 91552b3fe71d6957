import StrobeFormatting

extension TraceSummary {
    /// The summary as aligned text tables.
    public func renderText(perThread: Bool = true) -> String {
        var sections: [String] = []
        if let origin { sections.append(Self.renderOrigin(origin)) }
        if let triggers = renderTriggers() { sections.append(triggers) }
        var overall = TextTable(
            header: ["interval", "count", "total", "mean", "p50", "p90", "p99", "max", "cpu"],
            rightAligned: Set(1...8))
        for stats in intervals { overall.rows.append(Self.row(stats)) }
        sections.append("Intervals (all threads)\n" + overall.render())

        if perThread {
            var table = TextTable(
                header: ["thread", "interval", "count", "total", "mean", "p50", "p90", "p99", "max", "cpu"],
                rightAligned: Set(2...9))
            for stats in intervalsByThread { table.rows.append([stats.thread ?? ""] + Self.row(stats)) }
            sections.append("Intervals per thread\n" + table.render())
        }

        if !counters.isEmpty {
            var table = TextTable(
                header: ["counter", "samples", "min", "mean", "max", "last"], rightAligned: Set(1...5))
            for counter in counters {
                table.rows.append([
                    counter.name, String(counter.count), HumanFormat.value(counter.min, unit: counter.unit),
                    HumanFormat.value(counter.mean, unit: counter.unit),
                    HumanFormat.value(counter.max, unit: counter.unit),
                    HumanFormat.value(counter.last, unit: counter.unit),
                ])
            }
            sections.append("Counters\n" + table.render())
        }

        if let frameBudget {
            let budget = HumanFormat.duration(Double(frameBudget))
            if longIntervals.isEmpty {
                sections.append("Hitch risk (frame budget \(budget)): no interval longer than the budget")
            } else {
                var table = TextTable(header: ["risk", "interval", "thread", "at", "duration"], rightAligned: [3, 4])
                for interval in longIntervals {
                    table.rows.append([
                        interval.risk.rawValue, interval.name, interval.thread,
                        HumanFormat.duration(Double(interval.start)), HumanFormat.duration(Double(interval.duration)),
                    ])
                }
                var counts = TextTable(header: ["interval", "over budget", "over 2x budget"], rightAligned: [1, 2])
                for (name, risks) in hitchCounts.sorted(by: { $0.key < $1.key }) {
                    let may = risks[HitchRisk.mayHitch.rawValue] ?? 0
                    let hitch = risks[HitchRisk.hitch.rawValue] ?? 0
                    counts.rows.append([name, String(may + hitch), String(hitch)])
                }
                sections.append(
                    "Hitch risk (frame budget \(budget); over 2x the budget a frame is certainly late)\n"
                        + counts.render() + "\n\nLongest\n" + table.render())
            }
        }

        if !frequentChildren.isEmpty {
            var table = TextTable(
                header: ["parent", "child", "thread", "at", "count", "typical"], rightAligned: [3, 4, 5])
            for entry in frequentChildren {
                table.rows.append([
                    entry.parent, entry.child, entry.thread, HumanFormat.duration(Double(entry.parentStart)),
                    String(entry.count), HumanFormat.fixed(entry.typicalCount),
                ])
            }
            sections.append("Unusually many children in one parent\n" + table.render())
        }

        var lossLines = [
            "discarded events: \(loss.discardedEvents)", "overwritten events: \(loss.overwrittenEvents)",
            "packets after a gap: \(loss.droppedPacketMarks)", "skipped packets: \(loss.skippedPackets)",
            "ends without a begin: \(loss.unmatchedEnds)",
            "ends left out by the writer (begin not in the trace): \(loss.orphanEnds)",
            "read problems: \(loss.readIssues)",
        ]
        if let truncation = loss.truncation { lossLines.append("cut short: \(truncation)") }
        sections.append("Data loss\n" + lossLines.map { "  " + $0 }.joined(separator: "\n"))
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// The origin as one `name: value` line per value, sampling last.
    private static func renderOrigin(_ origin: TraceOrigin) -> String {
        var lines = origin.values.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }
        if let probability = origin.samplingProbability {
            lines.append("  \(TraceOrigin.samplingProbabilityName): \(probability)")
        }
        return "Metadata\n" + lines.joined(separator: "\n")
    }

    private static func row(_ stats: IntervalStatistics) -> [String] {
        [
            stats.name, String(stats.count), HumanFormat.duration(Double(stats.total)),
            HumanFormat.duration(stats.mean),
            HumanFormat.duration(stats.p50), HumanFormat.duration(stats.p90), HumanFormat.duration(stats.p99),
            HumanFormat.duration(Double(stats.max)),
            stats.cpuShare.map { HumanFormat.format($0 * 100, decimals: 0) + "% busy" } ?? "-",
        ]
    }
}
