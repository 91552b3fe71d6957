import StrobeHistoryStore
import StrobeReader
import StrobeStatistics

/// Turns one trace's bytes into what the fleet views keep of it
/// (``StrobeHistory/FleetTraceRecord``), or says why it cannot.
///
/// The entry point of every way traces arrive: `strobe ingest` reads files
/// and calls it, and an HTTP endpoint can call it with an upload's body and a
/// name for it.
package enum FleetTraceExtraction {
    /// Extracts the record of the trace in `bytes`; `source` names it (a path,
    /// or what an upload called it).
    ///
    /// A trace is refused, with the reason, when it holds no Perfetto packet
    /// (an empty or foreign file), is cut short, or has any problem the
    /// reader reports (a packet that does not decode, an event without a
    /// track, an unknown interned name); the refusal names the byte offset.
    package static func record(of bytes: [UInt8], source: String) -> Result<FleetTraceRecord, FleetTraceRefusal> {
        guard !bytes.isEmpty else { return .failure(FleetTraceRefusal(source: source, reason: "empty file")) }
        let trace = TraceReader.read(bytes: bytes, source: source)
        if let notATrace = trace.notATrace {
            return .failure(
                FleetTraceRefusal(source: source, reason: "byte \(notATrace.offset): \(notATrace.problem)"))
        }
        if let truncation = trace.truncation {
            return .failure(
                FleetTraceRefusal(source: source, reason: "cut short: byte \(truncation.offset): \(truncation.problem)")
            )
        }
        if let issue = trace.issues.first {
            let more = trace.issues.count > 1 ? " (and \(trace.issues.count - 1) more problems)" : ""
            return .failure(
                FleetTraceRefusal(source: source, reason: "damaged: byte \(issue.offset): \(issue.problem)\(more)"))
        }
        guard trace.decodedPacketCount > 0, trace.process != nil || !trace.threads.isEmpty else {
            return .failure(
                FleetTraceRefusal(source: source, reason: "not a Strobe or Perfetto trace: no process or thread in it"))
        }
        let origin = trace.origin
        let probability = origin?.samplingProbability ?? 1
        guard probability > 0, probability <= 1 else {
            return .failure(
                FleetTraceRefusal(source: source, reason: "sampling probability \(probability) is not in (0, 1]"))
        }
        return .success(
            FleetTraceRecord(
                id: FleetTraceRecord.identity(of: bytes), source: source, metadata: origin?.values ?? [:],
                samplingProbability: probability, metrics: metrics(of: trace)))
    }

    /// Per interval name, the ended intervals' durations; per counter name,
    /// its samples on every track.
    static func metrics(of trace: ParsedTrace) -> [FleetMetricRecord] {
        var intervals: [String: QuantileSketch] = [:]
        for interval in trace.intervals {
            guard let duration = interval.duration else { continue }
            intervals[interval.name, default: QuantileSketch()].add(Double(duration))
        }
        var counters: [String: QuantileSketch] = [:]
        for series in trace.counters {
            var sketch = counters[series.name] ?? QuantileSketch()
            for sample in series.samples { sketch.add(sample.value) }
            counters[series.name] = sketch
        }
        func rows(_ sketches: [String: QuantileSketch], _ kind: FleetMetricRecord.Kind) -> [FleetMetricRecord] {
            sketches.sorted { $0.key < $1.key }.compactMap { name, sketch in
                sketch.isEmpty
                    ? nil
                    : FleetMetricRecord(
                        kind: kind, name: name, count: Int64(sketch.count), total: sketch.sum,
                        sketch: sketch.serialized())
            }
        }
        return rows(intervals, .interval) + rows(counters, .counter)
    }
}

/// A trace that was not ingested, and why.
package struct FleetTraceRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The trace's path or name.
    package var source: String
    /// Why it was refused.
    package var reason: String

    /// `SOURCE: REASON`.
    package var description: String { "\(source): \(reason)" }
}
