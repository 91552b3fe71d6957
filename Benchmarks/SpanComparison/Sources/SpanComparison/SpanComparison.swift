import Foundation
import Strobe
import StrobeTestSupport
import StrobeTracing
import Tracing

/// Times a span through three tracers in one process, interleaved:
/// swift-distributed-tracing's `NoOpTracer` (the baseline), `StrobeTracer`
/// while a Strobe session records to a file, and swift-otel's SDK tracer
/// configured as a production service runs it (see ``OTelBackend``). Each
/// round times `spansPerSample` spans of every case through every tracer in
/// turn; a figure is the median of the rounds.
@main
enum SpanComparison {
    /// Spans per timed sample: below the batch span processor's default
    /// queue of 2,048, so that none is dropped for want of room when the
    /// previous sample has been exported, and every span made is counted.
    static let spansPerSample = 2_000
    /// Timed rounds; each times every case through every tracer once.
    static let rounds = 101

    static func main() async {
        Machine.current().printLine(moment: "start")
        do {
            try await compare()
        } catch {
            FileHandle.standardError.write(Data("span comparison: \(error)\n".utf8))
            exit(1)
        }
        Machine.current().printLine(moment: "end")
    }

    static func compare() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("span-comparison-\(getpid()).pftrace").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let session = try TraceSession.start(TraceConfiguration(outputPath: path))
        let strobe = StrobeTracer()
        let noOp = NoOpTracer()

        let otel = try startOTelBackend()
        var made = 0
        // One warm-up round (chunk pools, name tables, the processor's
        // queue), not counted.
        for spanCase in SpanCase.allCases {
            _ = spanCase.time(noOp, count: spansPerSample)
            _ = spanCase.time(strobe, count: spansPerSample)
            _ = spanCase.time(otel.tracer, count: spansPerSample)
            made += spansPerSample
            try await otel.waitUntilExported(made)
        }
        var samples: [SpanCase: [String: [Double]]] = [:]
        for round in 0..<rounds {
            for spanCase in SpanCase.allCases {
                let perSpan = { (nanoseconds: Double) in nanoseconds / Double(spansPerSample) }
                // The tracers take turns at going first, so that none always
                // follows the same one.
                for turn in 0..<3 {
                    switch (round + turn) % 3 {
                    case 0:
                        samples[spanCase, default: [:]]["noop", default: []]
                            .append(perSpan(spanCase.time(noOp, count: spansPerSample)))
                    case 1:
                        samples[spanCase, default: [:]]["strobe", default: []]
                            .append(perSpan(spanCase.time(strobe, count: spansPerSample)))
                    default:
                        samples[spanCase, default: [:]]["otel", default: []]
                            .append(perSpan(spanCase.time(otel.tracer, count: spansPerSample)))
                        made += spansPerSample
                        // Untimed: let the processor export this sample's
                        // spans, and check that it did.
                        try await otel.waitUntilExported(made)
                    }
                }
            }
        }
        let final = try await otel.shutDown()
        try session.stop()
        let discarded = session.statistics.discardedEvents

        for spanCase in SpanCase.allCases {
            guard let byTracer = samples[spanCase] else { continue }
            let noOpSpan = Quartiles(byTracer["noop"] ?? [])
            let strobeSpan = Quartiles(byTracer["strobe"] ?? [])
            let otelSpan = Quartiles(byTracer["otel"] ?? [])
            let baselineName = "NoOpTracer().withSpan\(spanCase.label), same run"
            Figure(
                name: "StrobeTracer().withSpan\(spanCase.label) while recording to a file", value: strobeSpan.median,
                unit: "ns/span", baselineName: baselineName, baselineValue: noOpSpan.median,
                extra: [
                    "tracer_share_ns": strobeSpan.median - noOpSpan.median, "p25_ns": strobeSpan.lower,
                    "p75_ns": strobeSpan.upper, "events_discarded": Double(discarded),
                ]
            ).printLine()
            Figure(
                name: "swift-otel 1.6.0 tracer withSpan\(spanCase.label), batch processor, none exporter",
                value: otelSpan.median, unit: "ns/span", baselineName: baselineName, baselineValue: noOpSpan.median,
                extra: [
                    "tracer_share_ns": otelSpan.median - noOpSpan.median, "p25_ns": otelSpan.lower,
                    "p75_ns": otelSpan.upper, "over_strobe": otelSpan.median / strobeSpan.median,
                ]
            ).printLine()
        }
        let otelCheck = final.exportedSpans + final.droppedSpans == made && final.droppedSpans == 0
        Figure(
            name: "swift-otel spans exported after shutdown", value: Double(final.exportedSpans), unit: "spans",
            baselineName: "spans made through the swift-otel tracer", baselineValue: Double(made),
            target: "ratio == 1, none dropped",
            extra: [
                "spans_dropped": Double(final.droppedSpans), "batches_exported": Double(final.exportedBatches),
                "rounds": Double(rounds), "spans_per_sample": Double(spansPerSample),
            ]
        ).printLine()
        for problem in final.problems {
            FileHandle.standardError.write(Data("swift-otel reported: \(problem)\n".utf8))
        }
        guard otelCheck else {
            throw ComparisonError.spanCountMismatch(
                made: made, exported: final.exportedSpans, dropped: final.droppedSpans)
        }
    }
}

/// The median and quartiles of per-span timings.
struct Quartiles {
    var lower: Double
    var median: Double
    var upper: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func at(_ fraction: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
        }
        lower = at(0.25)
        median = at(0.5)
        upper = at(0.75)
    }
}
