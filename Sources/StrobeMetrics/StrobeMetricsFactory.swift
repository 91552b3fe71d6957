#if StrobeMetrics
import CoreMetrics
import Strobe
import Synchronization

/// A swift-metrics backend that records every metric into the running Strobe
/// trace session, as counter tracks beside the app's own intervals.
///
/// ```swift
/// MetricsSystem.bootstrap(StrobeMetricsFactory())
/// Counter(label: "requests", dimensions: [("route", "/photos")]).increment()
/// ```
///
/// Each metric is a counter track named after its label and dimensions, as
/// `label{key=value,...}`:
/// - counters and floating-point counters record their running total;
/// - recorders (gauges) and meters record each value they are set to;
/// - timers record each duration, in nanoseconds, on a track of their own.
///
/// With no session running, updating a metric costs its bookkeeping and one
/// branch.
public struct StrobeMetricsFactory: MetricsFactory {
    /// A factory.
    public init() {}

    /// The track name of a metric: `label` alone, or `label{k=v,...}` with
    /// its dimensions in the order given.
    public static func trackName(label: String, dimensions: [(String, String)]) -> String {
        guard !dimensions.isEmpty else { return label }
        return label + "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
    }

    /// Makes a counter handler.
    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        StrobeCounter(name: Trace.Name(Self.trackName(label: label, dimensions: dimensions)))
    }

    /// Makes a floating-point counter handler.
    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)])
        -> any FloatingPointCounterHandler
    {
        StrobeFloatingPointCounter(name: Trace.Name(Self.trackName(label: label, dimensions: dimensions)))
    }

    /// Makes a recorder (gauge) handler.
    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        StrobeRecorder(name: Trace.Name(Self.trackName(label: label, dimensions: dimensions)))
    }

    /// Makes a meter handler.
    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        StrobeMeter(name: Trace.Name(Self.trackName(label: label, dimensions: dimensions)))
    }

    /// Makes a timer handler.
    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        StrobeTimer(name: Trace.Name(Self.trackName(label: label, dimensions: dimensions)))
    }

    /// Nothing to release: tracks live in the trace.
    public func destroyCounter(_ handler: any CounterHandler) {}
    /// Nothing to release.
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    /// Nothing to release.
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    /// Nothing to release.
    public func destroyMeter(_ handler: any MeterHandler) {}
    /// Nothing to release.
    public func destroyTimer(_ handler: any TimerHandler) {}
}

/// A counter: records its running total.
final class StrobeCounter: CounterHandler, Sendable {
    let name: Trace.Name
    private let total = Atomic<Int64>(0)

    init(name: Trace.Name) { self.name = name }

    func increment(by amount: Int64) {
        let value = total.wrappingAdd(amount, ordering: .relaxed).newValue
        Trace.counter(name, value)
    }

    func reset() {
        total.store(0, ordering: .relaxed)
        Trace.counter(name, Int64(0))
    }
}

/// A floating-point counter: records its running total.
final class StrobeFloatingPointCounter: FloatingPointCounterHandler, Sendable {
    let name: Trace.Name
    private let total = Mutex<Double>(0)

    init(name: Trace.Name) { self.name = name }

    func increment(by amount: Double) {
        let value = total.withLock { total -> Double in
            total += amount
            return total
        }
        Trace.counter(name, value)
    }

    func reset() {
        total.withLock { $0 = 0 }
        Trace.counter(name, 0.0)
    }
}

/// A recorder or gauge: records every value.
final class StrobeRecorder: RecorderHandler, Sendable {
    let name: Trace.Name

    init(name: Trace.Name) { self.name = name }

    func record(_ value: Int64) { Trace.counter(name, value) }
    func record(_ value: Double) { Trace.counter(name, value) }
}

/// A meter: records the value it is set to, incremented or decremented.
final class StrobeMeter: MeterHandler, Sendable {
    let name: Trace.Name
    private let current = Mutex<Double>(0)

    init(name: Trace.Name) { self.name = name }

    func set(_ value: Int64) { set(Double(value)) }

    func set(_ value: Double) {
        current.withLock { $0 = value }
        Trace.counter(name, value)
    }

    func increment(by amount: Double) { change(by: amount) }
    func decrement(by amount: Double) { change(by: -amount) }

    private func change(by amount: Double) {
        let value = current.withLock { current -> Double in
            current += amount
            return current
        }
        Trace.counter(name, value)
    }
}

/// A timer: records each duration, in nanoseconds.
final class StrobeTimer: TimerHandler, Sendable {
    let name: Trace.Name

    init(name: Trace.Name) { self.name = name }

    func recordNanoseconds(_ duration: Int64) { Trace.counter(name, duration, unit: .nanoseconds) }
}
#endif
