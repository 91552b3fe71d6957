import Foundation
import PerfettoWire
import StrobeFormatting

/// Flat and Chrome-format exports of a trace.
public enum TraceExport {
    /// The formats.
    public enum Format: String, Sendable, CaseIterable {
        /// Comma-separated rows, one per event, for spreadsheets and DuckDB.
        case csv
        /// One JSON object per line, for DuckDB, Spark and jq.
        case ndjson
        /// The Chrome trace-event format, for chrome://tracing and Speedscope.
        case chromeJSON = "chrome-json"
        /// The CPU samples as folded stacks, for flamegraph.pl and
        /// speedscope (see ``CPUProfile/folded(_:)``).
        case folded
    }

    /// One exported row.
    struct Row {
        var kind: String
        var name: String
        var tid: Int64?
        var thread: String
        var track: UInt64
        var time: UInt64
        var duration: UInt64?
        var depth: Int?
        var cpu: UInt64?
        var value: Double?
        var arguments: [String: TraceArgument]
    }

    /// The trace in `format`; ``Format/folded`` renders `profile`'s samples.
    public static func render(_ trace: ParsedTrace, as format: Format, profile: CPUProfile? = nil) -> String {
        switch format {
        case .csv: return csv(rows(trace))
        case .ndjson: return ndjson(rows(trace))
        case .chromeJSON: return chrome(trace)
        case .folded: return (profile ?? CPUProfile()).folded()
        }
    }

    static func rows(_ trace: ParsedTrace) -> [Row] {
        let names = Dictionary(trace.threads.map { ($0.trackUUID, $0.name) }, uniquingKeysWith: { a, _ in a })
        var rows: [Row] = []
        rows.reserveCapacity(trace.intervals.count + trace.instants.count)
        for interval in trace.intervals {
            var arguments = interval.arguments
            if let usage = interval.resourceUsage {
                for argument in ResourceUsageArgument.allCases { arguments[argument.name] = .int(usage[argument]) }
            }
            rows.append(
                Row(
                    kind: interval.isAsync ? "async_interval" : "interval", name: interval.name, tid: interval.tid,
                    thread: interval.isAsync ? "" : names[interval.track] ?? "", track: interval.track,
                    time: interval.start, duration: interval.duration, depth: interval.depth, cpu: interval.cpuTime,
                    value: nil, arguments: arguments))
        }
        for instant in trace.instants {
            rows.append(
                Row(
                    kind: "instant", name: instant.name, tid: instant.tid, thread: names[instant.track] ?? "",
                    track: instant.track, time: instant.time, duration: nil, depth: nil, cpu: nil, value: nil,
                    arguments: instant.arguments))
        }
        for counter in trace.counters {
            for sample in counter.samples {
                rows.append(
                    Row(
                        kind: "counter", name: counter.name, tid: nil, thread: "", track: counter.track,
                        time: sample.time,
                        duration: nil, depth: nil, cpu: nil, value: sample.value, arguments: [:]))
            }
        }
        rows.sort { ($0.time, $0.track) < ($1.time, $1.track) }
        return rows
    }

    static func json(_ arguments: [String: TraceArgument]) -> String {
        let object = arguments.mapValues(jsonValue)
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func jsonValue(_ argument: TraceArgument) -> Any {
        switch argument {
        case .int(let value): return value
        case .uint(let value): return value
        case .double(let value): return value.isFinite ? value : String(value)
        case .bool(let value): return value
        case .string(let value): return value
        }
    }

    /// `text` as one CSV field, quoted when it must be.
    static func csv(_ rows: [Row]) -> String {
        var lines = ["kind,name,tid,thread,track,ts_ns,dur_ns,depth,cpu_ns,value,args"]
        for row in rows {
            var cells: [String] = [row.kind, CSVField.escape(row.name)]
            cells.append(row.tid.map { String($0) } ?? "")
            cells.append(CSVField.escape(row.thread))
            cells.append(String(row.track))
            cells.append(String(row.time))
            cells.append(row.duration.map { String($0) } ?? "")
            cells.append(row.depth.map { String($0) } ?? "")
            cells.append(row.cpu.map { String($0) } ?? "")
            cells.append(row.value.map { String($0) } ?? "")
            cells.append(row.arguments.isEmpty ? "" : CSVField.escape(json(row.arguments)))
            lines.append(cells.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func ndjson(_ rows: [Row]) -> String {
        var lines: [String] = []
        lines.reserveCapacity(rows.count)
        for row in rows {
            var object: [String: Any] = ["kind": row.kind, "name": row.name, "track": row.track, "ts_ns": row.time]
            if let tid = row.tid { object["tid"] = tid }
            if !row.thread.isEmpty { object["thread"] = row.thread }
            if let duration = row.duration { object["dur_ns"] = duration }
            if let depth = row.depth { object["depth"] = depth }
            if let cpu = row.cpu { object["cpu_ns"] = cpu }
            if let value = row.value { object["value"] = value }
            if !row.arguments.isEmpty { object["args"] = row.arguments.mapValues(jsonValue) }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                lines.append(String(decoding: data, as: UTF8.self))
            }
        }
        return lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
    }

    /// Chrome trace-event JSON: complete ("X") events for intervals, "b"/"e"
    /// for async ones, "i" for instants, "C" for counters, and thread names.
    static func chrome(_ trace: ParsedTrace) -> String {
        let pid = Int(trace.process?.pid ?? 1)
        let origin = trace.intervals.startTimes.min() ?? 0
        func micros(_ nanoseconds: UInt64) -> Double { Double(nanoseconds &- origin) / 1000 }
        var events: [[String: Any]] = []
        if let process = trace.process {
            events.append(["ph": "M", "name": "process_name", "pid": pid, "args": ["name": process.name]])
        }
        for thread in trace.threads {
            events.append([
                "ph": "M", "name": "thread_name", "pid": pid, "tid": thread.tid, "args": ["name": thread.name],
            ])
        }
        let lastTime = max(trace.intervals.latestEnd ?? origin, trace.intervals.startTimes.max() ?? origin)
        for interval in trace.intervals {
            var arguments = interval.arguments.mapValues(jsonValue)
            if let cpu = interval.cpuTime { arguments["cpu_ns"] = cpu }
            if interval.isAsync {
                let common: [String: Any] = [
                    "name": interval.name, "cat": "async", "pid": pid, "id": String(interval.track),
                ]
                var begin = common
                begin["ph"] = "b"
                begin["ts"] = micros(interval.start)
                begin["args"] = arguments
                var end = common
                end["ph"] = "e"
                end["ts"] = micros(interval.end ?? lastTime)
                events.append(begin)
                events.append(end)
            } else {
                events.append([
                    "ph": "X", "name": interval.name, "pid": pid, "tid": interval.tid ?? 0,
                    "ts": micros(interval.start),
                    "dur": Double(interval.duration ?? (lastTime &- interval.start)) / 1000, "args": arguments,
                ])
            }
        }
        for instant in trace.instants {
            events.append([
                "ph": "i", "s": "t", "name": instant.name, "pid": pid, "tid": instant.tid ?? 0,
                "ts": micros(instant.time),
                "args": instant.arguments.mapValues(jsonValue),
            ])
        }
        for counter in trace.counters {
            for sample in counter.samples {
                events.append([
                    "ph": "C", "name": counter.name, "pid": pid, "ts": micros(sample.time),
                    "args": ["value": sample.value],
                ])
            }
        }
        let document: [String: Any] = ["traceEvents": events, "displayTimeUnit": "ns"]
        guard let data = try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
