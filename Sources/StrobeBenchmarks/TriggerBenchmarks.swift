import CStrobe
import Foundation
import Strobe
import StrobeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What arming a flight-recorder trigger costs: the recording calls with a
/// trigger armed on their interval's name and without, against one
/// `clock_gettime(CLOCK_MONOTONIC)`, and the background writer's CPU time
/// per record it checks, all measured in the same process.
enum TriggerBenchmarks {
    static let runs = 7
    static let events = 1_000_000

    static let directory = NSTemporaryDirectory() + "strobe-bench-\(getpid())-dumps"

    /// A flight recorder; with `armed`, a trigger watches the benchmark's
    /// interval (its threshold is never reached, so no dump is written).
    static func configuration(armed: Bool, flushInterval: Duration = .milliseconds(100)) -> TraceConfiguration {
        var configuration = TraceConfiguration()
        configuration.whenBufferFull = .overwriteOldest
        configuration.processSamplingInterval = .zero
        configuration.flushInterval = flushInterval
        if armed {
            configuration.flightRecorder = .init(directory: directory)
            configuration.triggers = [.interval("benchmark interval", longerThan: .seconds(10))]
        }
        return configuration
    }

    static func run() {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = CoreBenchmarks.clockBaseline()
        let baselineName = "clock_gettime(CLOCK_MONOTONIC)"
        func perEvent(armed: Bool, _ body: () -> Double) -> Double {
            CoreBenchmarks.withSession(configuration(armed: armed), body)
        }
        // Warm the chunk pool.
        _ = perEvent(armed: true) { timePairs(events / 2) }

        // Armed and unarmed runs alternate, so drift on a shared machine
        // touches both alike.
        var samples: [String: [Double]] = [:]
        for _ in 0..<runs {
            for armed in [false, true] {
                let label = armed ? "armed" : "unarmed"
                samples["begin \(label)", default: []].append(
                    perEvent(armed: armed) {
                        let elapsed = timeBegins(events)
                        _ = timeEnds(events)
                        return elapsed / Double(events)
                    })
                samples["end \(label)", default: []].append(
                    perEvent(armed: armed) {
                        _ = timeBegins(events)
                        return timeEnds(events) / Double(events)
                    })
                samples["pair \(label)", default: []].append(
                    perEvent(armed: armed) {
                        timePairs(events / 2) / Double(events / 2)
                    })
            }
        }
        let figures = samples.mapValues(median)
        for (name, unit, target) in [
            ("begin", "ns/event", "ratio <= 0.6"), ("end", "ns/event", "ratio <= 0.6"),
            ("pair", "ns/pair", "ratio <= 1.2"),
        ] {
            let armed = figures["\(name) armed"]!
            let unarmed = figures["\(name) unarmed"]!
            Figure(
                name: "\(name), flight recorder with an interval trigger armed on its name", value: armed, unit: unit,
                baselineName: baselineName, baselineValue: clock, target: target,
                extra: ["unarmed_ns": unarmed, "armed_minus_unarmed_ns": armed - unarmed]
            ).printLine()
        }

        // The check moved off the recording path: the writer's CPU time per
        // record it looks through, armed less unarmed.
        let writer = median(runs: 5) {
            writerNanosecondsPerRecord(armed: true) - writerNanosecondsPerRecord(armed: false)
        }
        Figure(
            name: "interval trigger check, background writer CPU per record", value: writer, unit: "ns/record",
            baselineName: baselineName, baselineValue: clock, target: "recording threads pay 0; ratio <= 1"
        ).printLine()
    }

    /// The writer's CPU time over a session in which this thread records
    /// `events` begin/end pairs, per record.
    static func writerNanosecondsPerRecord(armed: Bool) -> Double {
        let session = try! TraceSession.start(configuration(armed: armed, flushInterval: .milliseconds(10)))
        _ = timePairs(events / 2)
        // Two flush intervals: the writer has looked at every record.
        usleep(30_000)
        let cpu = session.backgroundCPUTime
        try! session.stop()
        let (seconds, attoseconds) = cpu.components
        return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(events)
    }
}
