#if StrobeMetrics
import CoreMetrics
import Foundation
import Strobe
import StrobeMetrics
import StrobeReader
import Testing
import StrobeTestTraits

@Suite(.serialized, .processWide)
struct StrobeMetricsTests {
    @Test func everyKindOfMetricBecomesACounterTrack() throws {
        let path = NSTemporaryDirectory() + "strobe-metrics-\(getpid()).pftrace"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        let factory = StrobeMetricsFactory()
        let session = try TraceSession.start(configuration)

        let counter = Counter(label: "requests", dimensions: [("route", "/photos")], factory: factory)
        counter.increment()
        counter.increment(by: 4)
        let floating = FloatingPointCounter(label: "bytes.ratio", factory: factory)
        floating.increment(by: 0.5)
        floating.increment(by: 0.25)
        let gauge = Gauge(label: "queue", factory: factory)
        gauge.record(7)
        gauge.record(3)
        let meter = Meter(label: "connections", factory: factory)
        meter.set(10)
        meter.increment(by: 2)
        meter.decrement(by: 5)
        let timer = CoreMetrics.Timer(label: "decode", dimensions: [("codec", "png")], factory: factory)
        timer.recordNanoseconds(1_500)
        timer.recordMilliseconds(2)
        try session.stop()

        let trace = try TraceReader.read(contentsOf: path)
        #expect(trace.counter(named: "requests{route=/photos}")?.samples.map(\.value) == [1, 5])
        #expect(trace.counter(named: "bytes.ratio")?.samples.map(\.value) == [0.5, 0.75])
        #expect(trace.counter(named: "queue")?.samples.map(\.value) == [7, 3])
        #expect(trace.counter(named: "connections")?.samples.map(\.value) == [10, 12, 7])
        let decode = trace.counter(named: "decode{codec=png}")
        #expect(decode?.samples.map(\.value) == [1_500, 2_000_000])
        #expect(decode?.unit == "ns")
    }

    @Test func trackNamesCarryTheDimensions() {
        #expect(StrobeMetricsFactory.trackName(label: "a", dimensions: []) == "a")
        #expect(StrobeMetricsFactory.trackName(label: "a", dimensions: [("k", "v"), ("x", "y")]) == "a{k=v,x=y}")
    }
}
#endif
