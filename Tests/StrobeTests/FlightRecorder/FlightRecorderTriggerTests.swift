import CStrobe
import Foundation
import StrobeReader
import StrobeTestSupport
import StrobeTestTraits
import Synchronization
import Testing

@testable import Strobe

/// Flight-recorder triggers: what fires a dump, what a dump holds, how dumps
/// are spaced and how many the directory keeps.
@Suite(.serialized, .processWide)
struct FlightRecorderTriggerTests {
    static func freshDirectory(_ name: String = #function) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        let path = NSTemporaryDirectory() + "strobe-dumps-\(getpid())-\(safe)-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    static func configuration(
        directory: String, before: Duration = .milliseconds(300), after: Duration = .milliseconds(200),
        spacing: Duration = .seconds(60), triggers: [TraceConfiguration.Trigger] = []
    ) -> TraceConfiguration {
        var configuration = TraceConfiguration()
        configuration.whenBufferFull = .overwriteOldest
        configuration.bufferSizePerThread = 4 << 20
        configuration.flushInterval = .milliseconds(20)
        configuration.processSamplingInterval = .zero
        configuration.flightRecorder = .init(
            directory: directory, before: before, after: after, minimumSpacing: spacing)
        configuration.triggers = triggers
        return configuration
    }

    /// The dump files in `directory`, oldest first.
    static func dumps(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".pftrace") }.sorted()
    }

    /// Waits up to 10 s for `count` dumps to be written.
    static func waitForDumps(_ session: TraceSession, count: UInt64) {
        let deadline = Date().addingTimeInterval(10)
        while session.statistics.triggeredDumps + session.statistics.failedDumps < count, Date() < deadline {
            usleep(5000)
        }
    }

    /// Records `frame` intervals of `length` for `duration`.
    static func frames(for duration: Duration, length: Duration = .milliseconds(4)) {
        let clock = ContinuousClock()
        let end = clock.now + duration
        while clock.now < end {
            Trace.interval("frame") {
                Trace.interval("layout") { sleep(for: length) }
            }
        }
    }

    static func sleep(for duration: Duration) {
        usleep(UInt32(Trace.nanoseconds(duration) / 1000))
    }

    @Test(.enabled(if: OfficialDecoder.isUsable))
    func slowFrameWritesOneDumpHoldingTheWindowAroundIt() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(
            Self.configuration(
                directory: directory, triggers: [.interval("frame", longerThan: .milliseconds(150))]))
        Self.frames(for: .milliseconds(450))
        Trace.interval("frame") {
            Trace.interval("decode") { Self.sleep(for: .milliseconds(20)) }
            Trace.interval("layout") { Self.sleep(for: .milliseconds(180)) }
        }
        // A second slow frame inside the window is counted, not dumped.
        Trace.interval("frame") { Self.sleep(for: .milliseconds(160)) }
        Self.frames(for: .milliseconds(400))
        Self.waitForDumps(session, count: 1)
        try session.stop()

        let files = Self.dumps(in: directory)
        try #require(files.count == 1, "one dump: \(files)")
        #expect(files[0].hasSuffix("Z-frame-over-150ms.pftrace"))
        #expect(TriggerDirectory.isDumpName(files[0]))
        #expect(session.statistics.triggeredDumps == 1)
        #expect(session.statistics.suppressedTriggers == 1)

        let decoded = try OfficialDecoder.decode(directory + "/" + files[0])
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        let marks = decoded.instants.filter { $0.name == "strobe.trigger" }
        try #require(marks.count == 1)
        let mark = marks[0]
        #expect(mark.args["reason"] == OfficialDecoder.Value.string("frame over 150ms"))
        #expect(mark.args["interval"] == OfficialDecoder.Value.string("frame"))
        guard case .int(let duration) = mark.args["duration_ns"] else {
            Issue.record("no duration_ns: \(mark.args)")
            return
        }
        #expect(duration >= 200_000_000 && duration < 40_000_000_000)
        // The mark sits at the slow frame's end, on its thread's track.
        let slow = decoded.slices(named: "frame").first { ($0.dur ?? 0) >= 200_000_000 }
        try #require(slow != nil)
        #expect(slow!.ts + slow!.dur! == mark.ts)
        #expect(mark.track == slow!.track)
        // At least the configured time on each side of the trigger.
        let frames = decoded.slices(named: "frame")
        let first = try #require(frames.map(\.ts).min())
        let last = try #require(frames.compactMap { slice in slice.dur.map { slice.ts + $0 } }.max())
        #expect(mark.ts - first >= 300_000_000, "before: \(Double(mark.ts - first) / 1e6) ms")
        // The session recorded for the time after, and the dump holds what it
        // recorded then (the last frame ends at most one frame before).
        guard case .int(let until) = mark.args["recorded_until_ns"] else {
            Issue.record("no recorded_until_ns: \(mark.args)")
            return
        }
        #expect(UInt64(until) >= mark.ts + 200_000_000)
        #expect(last + 25_000_000 >= UInt64(until), "after: \(Double(last - mark.ts) / 1e6) ms")

        // Strobe's own reader finds the same mark.
        let parsed = try TraceReader.read(contentsOf: directory + "/" + files[0])
        let triggers = parsed.instants.filter { $0.name == TriggerMark.name }
        #expect(triggers.count == 1)
        #expect(triggers.first?.arguments["reason"] == TraceArgument.string("frame over 150ms"))

        // strobe summarize shows the trigger first, with the slow frame and
        // what took its time.
        let summary = TraceSummary(trace: parsed)
        let trigger = try #require(summary.triggers.first)
        #expect(summary.triggers.count == 1)
        #expect(trigger.reason == "frame over 150ms")
        #expect(trigger.interval?.name == "frame")
        #expect((trigger.interval?.duration ?? 0) >= 200_000_000)
        #expect(trigger.interval?.longestChildren.map(\.name) == ["layout", "decode"])
        #expect(trigger.threshold == 150_000_000)
        #expect(trigger.coveredBefore >= 300_000_000 && trigger.coveredAfter >= 200_000_000)
        #expect(trigger.askedBefore == 300_000_000 && trigger.askedAfter == 200_000_000)
        let text = summary.renderText()
        #expect(text.hasPrefix("Trigger: frame over 150ms\n"), "\(text.prefix(400))")
        #expect(text.contains("  inside    layout "))
        #expect(trigger.suppressedTriggers == 1)
        #expect(text.contains("  also      1 more trigger meanwhile, counted, not dumped"))
        // `strobe summarize --format json` writes this encoding.
        let json = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
        #expect(json.contains("\"reason\":\"frame over 150ms\""), "\(json.prefix(300))")
    }

    /// An async interval is watched too, and so is a thread that ends a slow
    /// interval and exits at once.
    @Test func asyncIntervalsAndExitedThreadsAreWatched() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(
            Self.configuration(
                directory: directory, after: .milliseconds(20), spacing: .zero,
                triggers: [
                    .interval("upload", longerThan: .milliseconds(20)),
                    .interval("worker job", longerThan: .milliseconds(20)),
                ]))
        let upload = Trace.beginAsync("upload")
        usleep(30_000)
        upload.end()
        Self.waitForDumps(session, count: 1)
        let done = DispatchSemaphore(value: 0)
        Thread {
            Trace.interval("worker job") { usleep(30_000) }
            done.signal()
        }.start()
        done.wait()
        Self.waitForDumps(session, count: 2)
        // Begun on a thread that registers after this one, ended here: the
        // writer may see the end before the begin.
        let handOff = Synchronization.Mutex<Trace.AsyncInterval?>(nil)
        Thread {
            Trace.instant("register")
            handOff.withLock { $0 = Trace.beginAsync("upload") }
            done.signal()
        }.start()
        done.wait()
        usleep(30_000)
        handOff.withLock { $0?.end() }
        Self.waitForDumps(session, count: 3)
        try session.stop()
        let files = Self.dumps(in: directory)
        #expect(files.filter { $0.hasSuffix("-upload-over-20ms.pftrace") }.count == 2, "\(files)")
        #expect(files.filter { $0.hasSuffix("-worker-job-over-20ms.pftrace") }.count == 1, "\(files)")
        let parsed = try TraceReader.read(contentsOf: directory + "/" + files.first { $0.contains("upload") }!)
        let mark = try #require(parsed.instants.first { $0.name == TriggerMark.name })
        let interval = try #require(parsed.intervals(named: "upload").first)
        #expect(interval.end == mark.time)
    }

    /// A slow interval on a thread that exits before the writer looks fires
    /// one dump: the chunks the dump took and gave back are not read again.
    @Test func aThreadThatExitedFiresItsTriggerOnce() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(
            Self.configuration(
                directory: directory, after: .milliseconds(20), spacing: .zero,
                triggers: [.interval("worker job", longerThan: .milliseconds(20))]))
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { _ in
                Trace.interval("worker job") { usleep(30_000) }
                return nil
            }, nil)
        try #require(created == 0)
        pthread_join(thread, nil)
        Self.waitForDumps(session, count: 1)
        // Ten more turns of the writer, each of which would fire again.
        usleep(200_000)
        let dumped = session.statistics.triggeredDumps
        try session.stop()
        #expect(dumped == 1, "\(Self.dumps(in: directory))")
    }

    @Test func manualTriggersAreSpacedAndCounted() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(Self.configuration(directory: directory, after: .milliseconds(50)))
        Self.frames(for: .milliseconds(40))
        #expect(session.trigger("checkout failed"))
        #expect(!session.trigger("during the window"), "a dump is under way")
        Self.frames(for: .milliseconds(80))
        Self.waitForDumps(session, count: 1)
        #expect(!session.trigger("too soon"), "within the minimum spacing")
        try session.stop()
        #expect(!session.trigger("after stop"))
        let statistics = session.statistics
        #expect(statistics.triggeredDumps == 1)
        #expect(statistics.suppressedTriggers == 2)
        #expect(statistics.failedDumps == 0)
        let files = Self.dumps(in: directory)
        #expect(files.count == 1)
        #expect(files.first?.hasSuffix("-checkout-failed.pftrace") == true)
        let parsed = try TraceReader.read(contentsOf: directory + "/" + files[0])
        let mark = try #require(parsed.instants.first { $0.name == TriggerMark.name })
        #expect(mark.arguments["reason"] == TraceArgument.string("checkout failed"))
        #expect(mark.tid == Int64(cstrobe_thread_id_for_tests()), "on the calling thread's track")
        #expect(!parsed.intervals(named: "frame").isEmpty)
    }

    @Test func directoryKeepsTheNewestDumpsWithinItsCaps() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Files Strobe did not write stay, whatever their number or size.
        let foreign = ["notes.txt", "20200101T000000.000Z-Other.pftrace", "keep.pftrace"]
        for name in foreign {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(count: 100_000)))
        }
        var configuration = Self.configuration(directory: directory, after: .zero, spacing: .zero)
        configuration.flightRecorder?.maximumFiles = 2
        let session = try TraceSession.start(configuration)
        for (index, reason) in ["one", "two", "three", "four"].enumerated() {
            Self.frames(for: .milliseconds(15))
            #expect(session.trigger(reason))
            Self.waitForDumps(session, count: UInt64(index + 1))
            usleep(2000) // distinct milliseconds in the names
        }
        try session.stop()
        let names = Self.dumps(in: directory).filter { TriggerDirectory.isDumpName($0) }
        #expect(names.map { $0.split(separator: "-").last! } == ["three.pftrace", "four.pftrace"], "\(names)")
        for name in foreign { #expect(FileManager.default.fileExists(atPath: directory + "/" + name)) }
        #expect(session.statistics.triggeredDumps == 4)

        // A byte cap below one dump's size keeps the newest dump only.
        configuration.flightRecorder?.maximumFiles = 100
        configuration.flightRecorder?.maximumBytes = 1
        let second = try TraceSession.start(configuration)
        for (index, reason) in ["five", "six"].enumerated() {
            Self.frames(for: .milliseconds(15))
            #expect(second.trigger(reason))
            Self.waitForDumps(second, count: UInt64(index + 1))
            usleep(2000)
        }
        try second.stop()
        let left = Self.dumps(in: directory).filter { TriggerDirectory.isDumpName($0) }
        #expect(left.count == 1 && left.first?.hasSuffix("-six.pftrace") == true, "\(left)")
        for name in foreign { #expect(FileManager.default.fileExists(atPath: directory + "/" + name)) }
    }

    @Test func counterCrossingItsThresholdTriggersOnce() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(
            Self.configuration(
                directory: directory, after: .milliseconds(30), spacing: .zero,
                triggers: [.counter("queue.depth", above: 100), .counter("free.slots", below: 2.5)]))
        for value in [10, 50, 150, 200, 180] {
            Trace.counter("queue.depth", value)
            usleep(3000)
        }
        Self.waitForDumps(session, count: 1)
        // Back below, then above again: a second crossing, dumped (no spacing).
        for value in [90, 120] {
            Trace.counter("queue.depth", value)
            usleep(3000)
        }
        Self.waitForDumps(session, count: 2)
        Trace.counter("free.slots", 3.0)
        Trace.counter("free.slots", 1.5)
        Self.waitForDumps(session, count: 3)
        try session.stop()
        let files = Self.dumps(in: directory)
        #expect(files.filter { $0.hasSuffix("-queue-depth-above-100.pftrace") }.count == 2, "\(files)")
        #expect(files.filter { $0.hasSuffix("-free-slots-below-2-5.pftrace") }.count == 1, "\(files)")
        #expect(session.statistics.suppressedTriggers == 0)
        let first = try TraceReader.read(contentsOf: directory + "/" + files.first { $0.contains("queue") }!)
        let mark = try #require(first.instants.first { $0.name == TriggerMark.name })
        #expect(mark.arguments["value"] == TraceArgument.double(150))
        #expect(mark.arguments["counter"] == TraceArgument.string("queue.depth"))
        let sample = try #require(first.counter(named: "queue.depth")?.samples.first { $0.value == 150 })
        #expect(sample.time == mark.time)
    }

    /// A trigger that fires after the writer's last look and before the
    /// stop is dumped at the stop, with the window the stop leaves.
    @Test func aTriggerJustBeforeTheStopIsDumped() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Self.configuration(
            directory: directory, triggers: [.interval("frame", longerThan: .milliseconds(30))])
        // The writer does not look through the rings again before the stop.
        configuration.flushInterval = .seconds(60)
        let session = try TraceSession.start(configuration)
        usleep(20_000)
        Trace.interval("frame") { Self.sleep(for: .milliseconds(40)) }
        try session.stop()
        #expect(session.statistics.triggeredDumps == 1)
        #expect(Self.dumps(in: directory).count == 1)
    }

    /// A dump shows in `dumpsInProgress` from its trigger until its file is
    /// written, so an app can keep working until the window after is whole.
    @Test func aDumpIsInProgressUntilItIsWritten() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(Self.configuration(directory: directory, after: .milliseconds(100)))
        #expect(session.statistics.dumpsInProgress == 0)
        #expect(session.trigger("now"))
        #expect(session.statistics.dumpsInProgress == 1)
        Self.waitForDumps(session, count: 1)
        #expect(session.statistics.dumpsInProgress == 0)
        #expect(session.statistics.triggeredDumps == 1)
        try session.stop()
    }

    /// Chunks that end before the window are left out: the dump begins at
    /// most one chunk's worth of time before it, and keeps every event of
    /// the window.
    ///
    /// The test reads CLOCK_BOOTTIME after each counter, so it knows when
    /// each one was recorded even where the machine took the thread off the
    /// CPU: the event before the dump's first must be older than the window
    /// (else a chunk inside the window was dropped), and an empty dump is
    /// right only where the thread recorded nothing in the window.
    @Test func timeBeforeTheWindowIsLeftOut() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let window: UInt64 = 60_000_000
        let session = try TraceSession.start(
            Self.configuration(
                directory: directory, before: .nanoseconds(Int64(window)), after: .zero))
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(500)
        // When each counter had been recorded, by the trace's clock.
        var recordedBy: [UInt64] = []
        recordedBy.reserveCapacity(400_000)
        // About 3,000 counters (one 64 KiB chunk) every 10 ms.
        while clock.now < end {
            Trace.counter("sequence", recordedBy.count)
            recordedBy.append(cstrobe_boottime_ns())
            if recordedBy.count % 300 == 0 { usleep(1000) }
        }
        #expect(session.trigger("now"))
        Self.waitForDumps(session, count: 1)
        try session.stop()
        let files = Self.dumps(in: directory)
        try #require(files.count == 1)
        let parsed = try TraceReader.read(contentsOf: directory + "/" + files[0])
        let mark = try #require(parsed.instants.first { $0.name == TriggerMark.name })
        let earliest = mark.time - window
        // Converting the raw clock to CLOCK_BOOTTIME may place an event this
        // far from where the thread read it.
        let tolerance: UInt64 = 1_000_000
        guard let samples = parsed.counter(named: "sequence")?.samples, let first = samples.first,
            let last = samples.last
        else {
            let lastRecorded = try #require(recordedBy.last)
            #expect(
                lastRecorded < earliest + tolerance,
                "an empty dump, though the thread recorded \(Double(lastRecorded - earliest) / 1e6) ms into the window")
            return
        }
        let firstIndex = Int(first.value)
        #expect(firstIndex > 0, "not the whole ring")
        if firstIndex > 0, firstIndex <= recordedBy.count {
            let before = recordedBy[firstIndex - 1]
            #expect(
                before < earliest + tolerance,
                "the event before the dump's first was recorded \(Double(Int64(before) - Int64(earliest)) / 1e6) ms into the window"
            )
        }
        #expect(first.time >= mark.time - 300_000_000, "not the whole ring: \(Double(mark.time - first.time) / 1e6) ms")
        #expect(Int(last.value) == recordedBy.count - 1, "the last counter before the trigger is in the dump")
        #expect(samples.count == Int(last.value) - firstIndex + 1, "every counter from the first kept on")
    }

    /// A dump that cannot be written is counted and its error kept; the
    /// session records on.
    @Test func aFailedDumpIsCountedAndSaysWhy() throws {
        let directory = Self.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let session = try TraceSession.start(Self.configuration(directory: directory, after: .zero, spacing: .zero))
        try FileManager.default.removeItem(atPath: directory)
        Self.frames(for: .milliseconds(10))
        #expect(session.trigger("nowhere to go"))
        Self.waitForDumps(session, count: 1)
        #expect(session.statistics.failedDumps == 1)
        #expect(session.statistics.triggeredDumps == 0)
        let error = try #require(session.lastDumpError)
        #expect(error.description.contains(directory + "/"), "\(error)")
        #expect(error.description.contains("nowhere-to-go.pftrace"), "\(error)")
        // The next dump, with the directory back, is written.
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(session.trigger("back again"))
        Self.waitForDumps(session, count: 2)
        try session.stop()
        #expect(session.statistics.triggeredDumps == 1)
        #expect(Self.dumps(in: directory).count == 1)
    }
}

// swift-format-ignore: AlwaysUseLowerCamelCase
private func cstrobe_thread_id_for_tests() -> UInt64 { cstrobe_thread_id() }
