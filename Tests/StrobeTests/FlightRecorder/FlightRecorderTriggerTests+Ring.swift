import Foundation
import ProfileWorkload
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Synchronization
import Testing

@testable import Strobe

// What the ring keeps through a dump: nothing lost while recording goes on,
// and exactly the overwritten events counted.
extension FlightRecorderTriggerTests {
    /// A thread records flat out through a dump: the dump holds its events
    /// from before and after the trigger with none missing where the before
    /// and after parts meet, and the session counts every event.
    @Test func recordingGoesOnThroughADumpAndLosesNothing() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Self.configuration(directory: directory, before: .seconds(5), after: .milliseconds(150))
        configuration.bufferSizePerThread = 16 << 20
        let session = try TraceSession.start(configuration)
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let recorded = Atomic<Int>(0)
        Thread {
            Trace.setThreadName("steady")
            var index = 0
            while !stop.load(ordering: .relaxed) {
                Trace.counter("sequence", index)
                index += 1
                if index == 10_000 { started.signal() }
                if index % 64 == 0 { usleep(100) }
            }
            recorded.store(index, ordering: .relaxed)
            done.signal()
        }.start()
        started.wait()
        usleep(50_000)
        #expect(session.trigger("mid-run"))
        // The thread records until the dump is written, or for a second after
        // the trigger (far past the 150 ms window) where a loaded machine
        // writes it slowly: at this pace (about 200,000 events a second on an
        // Intel Xeon with a CI run beside it) the 16 MiB ring holds more than two seconds of
        // events, and a ring that wraps overwrites what it counts.
        let recordingEnds = Date().addingTimeInterval(1)
        while session.statistics.triggeredDumps + session.statistics.failedDumps < 1, Date() < recordingEnds {
            usleep(5000)
        }
        stop.store(true, ordering: .relaxed)
        Self.waitForDumps(session, count: 1)
        done.wait()
        try session.stop()
        let statistics = session.statistics
        #expect(statistics.discardedEvents == 0)
        #expect(statistics.overwrittenEvents == 0)
        #expect(statistics.recordedEvents >= UInt64(recorded.load(ordering: .relaxed)))

        let files = Self.dumps(in: directory)
        try #require(files.count == 1)
        let parsed = try TraceReader.read(contentsOf: directory + "/" + files[0])
        let mark = try #require(parsed.instants.first { $0.name == TriggerMark.name })
        let values = try #require(parsed.counter(named: "sequence")).samples
        #expect(values.first?.value == 0, "the dump begins where the thread began")
        for (index, sample) in values.enumerated() where sample.value != Double(index) {
            Issue.record("sample \(index) holds \(sample.value): events missing")
            break
        }
        // Events on both sides of the mark, reaching well into the window
        // after it (the thread can be descheduled for tens of milliseconds
        // on a loaded machine or under a sanitizer, so not to its very end).
        #expect(values.contains { $0.time < mark.time })
        let reach = Int64(values.last?.time ?? 0) - Int64(mark.time)
        #expect(reach > 100_000_000, "the dump reaches \(reach / 1_000_000) ms past the mark of a 150 ms window")
    }

    /// With a ring far smaller than what a thread records through the
    /// window, the dump misses exactly the events the trace counts as
    /// overwritten, and nothing else.
    @Test func aSmallRingLosesOnlyWhatItCountsAsOverwritten() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Self.configuration(directory: directory, before: .seconds(5), after: .milliseconds(100))
        configuration.bufferSizePerThread = 64 << 10
        let session = try TraceSession.start(configuration)
        let stop = Atomic<Bool>(false)
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                Trace.counter("sequence", index)
                index += 1
                if index == 50_000 { started.signal() }
                if index % 4096 == 0 { usleep(200) }
            }
            done.signal()
        }.start()
        started.wait()
        #expect(session.trigger("small ring"))
        Self.waitForDumps(session, count: 1)
        stop.store(true, ordering: .relaxed)
        done.wait()
        try session.stop()
        let files = Self.dumps(in: directory)
        try #require(files.count == 1)
        let parsed = try TraceReader.read(contentsOf: directory + "/" + files[0])
        let values = try #require(parsed.counter(named: "sequence")).samples.map { Int($0.value) }
        let last = try #require(values.last)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "in order, none twice")
        let overwritten = Int(parsed.loss.overwrittenEvents)
        #expect(overwritten > 0, "the ring overwrote")
        #expect(
            values.count + overwritten == last + 1,
            "\(values.count) in the dump, \(overwritten) overwritten, last \(last)")
    }

    /// After a dump, the ring holds what it would have held without it: the
    /// stop's trace has every event the session does not count as
    /// overwritten, whether the ring is large enough for the whole run or
    /// overwrites, and a dump taken later holds them too.
    @Test(arguments: [16 << 20, 64 << 10])
    func aDumpLeavesTheRingWholeAndOverwrittenEventsExact(bufferSize: Int) throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = temporaryTracePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = Self.configuration(directory: directory, before: .seconds(5), after: .milliseconds(50))
        configuration.outputPath = path
        configuration.bufferSizePerThread = bufferSize
        let session = try TraceSession.start(configuration)
        let phase = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let recorded = Atomic<Int>(0)
        // With the large ring the run records a bounded number of events,
        // which it holds whole however long a loaded machine takes to write
        // the dump; the small ring records until the end, and overwrites.
        let limit = bufferSize >= 16 << 20 ? 300_000 : Int.max
        Thread {
            var index = 0
            while phase.load(ordering: .relaxed) < 2 {
                guard index < limit else {
                    usleep(1_000)
                    continue
                }
                Trace.counter("sequence", index)
                index += 1
                if index == 20_000 { started.signal() }
                if index % 256 == 0 { usleep(100) }
            }
            recorded.store(index, ordering: .relaxed)
            done.signal()
        }.start()
        started.wait()
        #expect(session.trigger("first"))
        Self.waitForDumps(session, count: 1)
        usleep(30_000)
        phase.store(2, ordering: .relaxed)
        done.wait()
        try session.stop()

        let statistics = session.statistics
        let parsed = try TraceReader.read(contentsOf: path)
        let values = try #require(parsed.counter(named: "sequence")).samples.map { Int($0.value) }
        let count = recorded.load(ordering: .relaxed)
        #expect(values.last == count - 1)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 + 1 == $1 }, "the ring's events are contiguous")
        #expect(
            UInt64(values.count) + statistics.overwrittenEvents == UInt64(count),
            "\(values.count) in the stop's trace, \(statistics.overwrittenEvents) overwritten, \(count) recorded")
        if bufferSize >= 16 << 20 { #expect(statistics.overwrittenEvents == 0 && values.first == 0) }
    }

    /// A dump of a session with a CPU profile carries the samples of its
    /// window: what the thread was doing around the trigger.
    @Test func aDumpCarriesTheCPUSamplesOfItsWindow() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Self.configuration(
            directory: directory, before: .milliseconds(300), after: .milliseconds(200))
        configuration.cpuProfile = .init(frequency: 999)
        let session = try TraceSession.start(configuration)
        // 400 ms of the thread's CPU time, then the trigger, then 300 more.
        ProfileWorkload.run(threads: 1, milliseconds: 400)
        let triggered = ProcessMeasurements.boottimeNanoseconds()
        #expect(session.trigger("busy"))
        ProfileWorkload.run(threads: 1, milliseconds: 300)
        Self.waitForDumps(session, count: 1)
        try session.stop()
        let files = Self.dumps(in: directory)
        try #require(files.count == 1)
        let profile = try CPUProfile.read(contentsOf: directory + "/" + files[0])
        // About 500 ms of the window's CPU time at 999 Hz (about 50 on the
        // CPU-time timer's 100 Hz tick); a loaded machine gives fewer.
        #expect(profile.samples.count >= 20, "\(profile.samples.count) samples")
        #expect(profile.method != nil && profile.frequency == 999)
        let first = try #require(profile.samples.map(\.time).min())
        let last = try #require(profile.samples.map(\.time).max())
        #expect(first >= triggered - 300_000_000 - 5_000_000, "a sample from before the window")
        #expect(last <= triggered + 200_000_000 + 50_000_000, "a sample from after the window")
        let heavy = profile.share(of: profile.samples) { $0 == ProfileWorkload.truth[0].function }
        #expect(heavy > 0.4 && heavy < 0.8, "heavyShare holds \(heavy) of the samples")
    }
}
