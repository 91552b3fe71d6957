import Foundation
import StrobeDiff
import StrobeStatistics
import StrobeTestSupport

/// `make bench sketch`: the quantile sketch's accuracy after merging many
/// sessions' sketches, its size, and its speed against sorting every value.
enum SketchBenchmarks {
    static func run() {
        ToolBenchmarkSection.printOpeningLine("sketch")
        // 10^7 events in 1,000 sessions of 10^4, each session with its own
        // speed: log-normal durations around 20 ms.
        let sessions = 1_000
        let perSession = 10_000
        var generator = SeededGenerator(seed: 2026)
        var values = [Double](repeating: 0, count: sessions * perSession)
        for session in 0..<sessions {
            let factor = exp(0.3 * generator.normal())
            for event in 0..<perSession {
                values[session * perSession + event] = 20e6 * factor * exp(0.5 * generator.normal())
            }
        }

        let sketchStart = DispatchTime.now().uptimeNanoseconds
        var serialized: [[UInt8]] = []
        serialized.reserveCapacity(sessions)
        for session in 0..<sessions {
            var sketch = QuantileSketch()
            for event in 0..<perSession { sketch.add(values[session * perSession + event]) }
            serialized.append(sketch.serialized())
        }
        var merged = QuantileSketch()
        for bytes in serialized { merged.merge(try! QuantileSketch(serialized: bytes)) }
        let quantiles = [0.5, 0.9, 0.99].map { merged.quantile($0) }
        let sketchSeconds = Double(DispatchTime.now().uptimeNanoseconds - sketchStart) / 1e9

        let sortStart = DispatchTime.now().uptimeNanoseconds
        values.sort()
        let exact = [0.5, 0.9, 0.99].map { Quantiles.quantile(sorted: values, $0) }
        let sortSeconds = Double(DispatchTime.now().uptimeNanoseconds - sortStart) / 1e9

        for (index, name) in ["P50", "P90", "P99"].enumerated() {
            let error = abs(quantiles[index] - exact[index]) / exact[index] * 100
            Figure(
                name: "\(name) of 10^7 events from 1,000 merged session sketches, relative error", value: error,
                unit: "%", baselineName: "allowed", baselineValue: 1, target: "value <= 1",
                extra: ["sketch_ms": quantiles[index] / 1e6, "exact_ms": exact[index] / 1e6]
            ).printLine()
        }
        let sizes = serialized.map { Double($0.count) }
        Figure(
            name: "serialized sketch of one session (10^4 events), mean",
            value: sizes.reduce(0, +) / Double(sizes.count),
            unit: "bytes", baselineName: "the session's durations as 8-byte values",
            baselineValue: Double(perSession * 8),
            extra: ["max_bytes": sizes.max() ?? 0, "merged_bytes": Double(merged.serialized().count)]
        ).printLine()
        Figure(
            name: "sketch 10^7 events in 1,000 sessions, serialize, read back, merge, 3 quantiles",
            value: sketchSeconds,
            unit: "s", baselineName: "sort the 10^7 values for exact quantiles", baselineValue: sortSeconds
        ).printLine()
    }
}
