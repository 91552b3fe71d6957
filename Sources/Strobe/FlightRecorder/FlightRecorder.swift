import StrobeFormatting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TraceConfiguration {
    /// Where a flight recorder writes the dumps its ``Trigger``s ask for, how
    /// much time each dump covers, and how many it keeps.
    ///
    /// A flight recorder records into a ring
    /// (``FullBufferPolicy/overwriteOldest``) and writes nothing until
    /// something worth keeping happens: a trigger fires, the session keeps
    /// recording for ``after`` more, and then writes one file holding what
    /// the ring held before the trigger (up to ``before`` of it) and
    /// everything recorded after, with the trigger marked as an instant
    /// named `strobe.trigger` whose argument `reason` says why.
    ///
    /// ```swift
    /// var configuration = TraceConfiguration()
    /// configuration.whenBufferFull = .overwriteOldest
    /// configuration.flightRecorder = .init(directory: "/var/tmp/app-traces", before: .seconds(10), after: .seconds(2))
    /// configuration.triggers = [
    ///     .interval("frame", longerThan: .milliseconds(33)),
    ///     .counter("queue.depth", above: 100),
    /// ]
    /// let session = try TraceSession.start(configuration)
    /// // elsewhere, when something goes wrong:
    /// session.trigger("checkout failed")
    /// ```
    ///
    /// Files are named after the trigger's time (UTC) and reason, as in
    /// `20261123T171502.123Z-frame-over-33ms.pftrace`.
    public struct FlightRecorder: Sendable, Hashable {
        /// The directory dumps are written to; created when missing.
        public var directory: String
        /// How much of the time before a trigger a dump keeps. Whole chunks
        /// of a thread's ring (4 to 64 KiB of events) that end earlier are
        /// left out, so a dump holds at least this much, and at most one
        /// chunk more, when the ring holds it: the ring
        /// (``TraceConfiguration/bufferSizePerThread``) bounds it, and a
        /// thread that recorded more than its ring holds keeps what the ring
        /// held. Default: 10 seconds.
        public var before: Duration
        /// How long the session keeps recording after a trigger before it
        /// writes the dump. A session stopped sooner writes the dump with
        /// what it has. During this time each thread may hold up to another
        /// ring's worth of events beside its ring. Default: 2 seconds.
        public var after: Duration
        /// The least time from one dumped trigger to the next. A trigger
        /// that fires sooner, or while a dump is still recording or being
        /// written, is counted in ``TraceSession/Statistics/suppressedTriggers``
        /// and not dumped. Default: 60 seconds.
        public var minimumSpacing: Duration
        /// The most dump files the directory keeps; the oldest are deleted
        /// first. Only files named as Strobe names dumps are counted or
        /// deleted. Default: 10.
        public var maximumFiles: Int
        /// The most bytes the directory's dump files may take together; the
        /// oldest are deleted first, though the newest dump is always kept.
        /// Default: 512 MiB.
        public var maximumBytes: Int

        /// A flight recorder that dumps into `directory`.
        public init(
            directory: String,
            before: Duration = .seconds(10),
            after: Duration = .seconds(2),
            minimumSpacing: Duration = .seconds(60),
            maximumFiles: Int = 10,
            maximumBytes: Int = 512 << 20
        ) {
            self.directory = directory
            self.before = before
            self.after = after
            self.minimumSpacing = minimumSpacing
            self.maximumFiles = maximumFiles
            self.maximumBytes = maximumBytes
        }
    }

    /// A condition that makes a flight recorder dump itself.
    ///
    /// The background writer checks the conditions as it looks through what
    /// the threads recorded, once per ``TraceConfiguration/flushInterval``,
    /// so arming a trigger adds nothing to the cost of recording; the time
    /// a dump covers is measured from the moment the condition was met (an
    /// interval's end, a counter's sample), not from when it was noticed.
    public struct Trigger: Sendable, Hashable, CustomStringConvertible {
        enum Condition: Sendable, Hashable {
            case intervalLongerThan(String, Duration)
            case counterAbove(String, Double)
            case counterBelow(String, Double)
        }

        let condition: Condition

        /// Fires when an interval named `name` ends more than `threshold`
        /// after it began: intervals of `Trace.begin`/`Trace.end` and
        /// `Trace.interval`, and async intervals (a renamable one is known by
        /// the name it began with).
        public static func interval(_ name: String, longerThan threshold: Duration) -> Trigger {
            Trigger(condition: .intervalLongerThan(name, threshold))
        }

        /// Fires when the counter `name` goes above `threshold`: on its first
        /// sample above it, and again only after a sample at or below it.
        public static func counter(_ name: String, above threshold: Double) -> Trigger {
            Trigger(condition: .counterAbove(name, threshold))
        }

        /// Fires when the counter `name` goes below `threshold`: on its first
        /// sample below it, and again only after a sample at or above it.
        public static func counter(_ name: String, below threshold: Double) -> Trigger {
            Trigger(condition: .counterBelow(name, threshold))
        }

        /// The name of the interval or counter the trigger watches.
        var name: String {
            switch condition {
            case .intervalLongerThan(let name, _), .counterAbove(let name, _), .counterBelow(let name, _): return name
            }
        }

        /// The reason a dump gives when this trigger fires, such as
        /// `frame over 33ms` or `queue.depth above 100`.
        public var description: String {
            switch condition {
            case .intervalLongerThan(let name, let threshold):
                return "\(name) over \(TriggerText.duration(threshold))"
            case .counterAbove(let name, let threshold):
                return "\(name) above \(TriggerText.number(threshold))"
            case .counterBelow(let name, let threshold):
                return "\(name) below \(TriggerText.number(threshold))"
            }
        }
    }

    /// The problem with the flight recorder and its triggers, or nil; the
    /// directory is created when missing.
    func flightRecorderProblem() -> TraceSessionError? {
        if let problem = flightRecorderSettingProblem() { return .invalidConfiguration(problem) }
        guard let recorder = flightRecorder else { return nil }
        return TriggerDirectory.problem(creating: recorder.directory)
    }

    private func flightRecorderSettingProblem() -> String? {
        guard let recorder = flightRecorder else {
            return triggers.isEmpty ? nil : "triggers need a flightRecorder, which names the directory for dumps"
        }
        guard whenBufferFull == .overwriteOldest else {
            return "flightRecorder needs whenBufferFull = .overwriteOldest: a ring to dump from"
        }
        for (label, duration) in [
            ("before", recorder.before), ("after", recorder.after), ("minimumSpacing", recorder.minimumSpacing),
        ] where duration < .zero {
            return "flightRecorder.\(label) must not be negative, not \(duration)"
        }
        guard recorder.maximumFiles >= 1 else {
            return "flightRecorder.maximumFiles must be at least 1, not \(recorder.maximumFiles)"
        }
        guard recorder.maximumBytes >= 1 else {
            return "flightRecorder.maximumBytes must be positive, not \(recorder.maximumBytes)"
        }
        for (index, trigger) in triggers.enumerated() {
            if trigger.name.isEmpty { return "triggers[\(index)]: the \(trigger.kindName) name is empty" }
            switch trigger.condition {
            case .intervalLongerThan(_, let threshold) where threshold < .zero:
                return "triggers[\(index)] (\(trigger.name)): the threshold must not be negative, not \(threshold)"
            case .counterAbove(_, let threshold) where !threshold.isFinite,
                .counterBelow(_, let threshold) where !threshold.isFinite:
                return "triggers[\(index)] (\(trigger.name)): the threshold must be a finite number, not \(threshold)"
            default:
                break
            }
        }
        if let index = triggers.indices.first(where: { triggers[..<$0].contains(triggers[$0]) }) {
            return "triggers[\(index)] (\(triggers[index])) is listed twice"
        }
        return nil
    }
}

extension TraceConfiguration.Trigger {
    var kindName: String {
        switch condition {
        case .intervalLongerThan: return "interval"
        case .counterAbove, .counterBelow: return "counter"
        }
    }
}

/// Short texts for trigger reasons and file names.
enum TriggerText {
    /// `33ms`, `1.5s`, `250us`, `700ns`.
    static func duration(_ duration: Duration) -> String {
        let nanoseconds = Trace.nanoseconds(duration)
        for (unit, size) in [("s", UInt64(1_000_000_000)), ("ms", 1_000_000), ("us", 1_000)] where nanoseconds >= size {
            return number(Double(nanoseconds) / Double(size)) + unit
        }
        return "\(nanoseconds)ns"
    }

    /// A number without a needless fraction: `100`, `2.5`.
    static func number(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        let text = String(value)
        return text
    }

    /// `reason` as a file-name part: lowercase letters, digits and single
    /// dashes, at most 64 characters; `trigger` when nothing is left.
    static func fileNamePart(_ reason: String) -> String {
        var part = ""
        var dash = false
        for scalar in reason.lowercased().unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                if dash, !part.isEmpty { part.append("-") }
                dash = false
                part.unicodeScalars.append(scalar)
                if part.count >= 64 { break }
            } else {
                dash = true
            }
        }
        return part.isEmpty ? "trigger" : part
    }
}

/// The dump directory: checks, names, and the caps on what it keeps.
enum TriggerDirectory {
    /// Why `directory` cannot take dumps, or nil; creates it (and its
    /// parents) when missing.
    static func problem(creating directory: String) -> TraceSessionError? {
        func failure(_ problem: String, errno: Int32? = nil) -> TraceSessionError {
            TraceSessionError(kind: .invalidConfiguration, path: directory, errno: errno, problem: problem)
        }
        guard !directory.isEmpty else { return failure("flightRecorder.directory is empty") }
        let bytes = Array(directory.utf8)
        for end in bytes.indices where end > 0 && (bytes[end] == UInt8(ascii: "/") || end == bytes.count - 1) {
            let prefix = String(decoding: bytes[...(bytes[end] == UInt8(ascii: "/") ? end - 1 : end)], as: UTF8.self)
            if prefix.isEmpty || prefix.hasSuffix("/") { continue }
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                let code = errno
                return failure(
                    "flightRecorder.directory \(directory): cannot create \(prefix): \(ErrnoText.message(code))",
                    errno: code)
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            let code = errno
            return failure("flightRecorder.directory \(directory): \(ErrnoText.message(code))", errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return failure("flightRecorder.directory \(directory) is not a directory", errno: ENOTDIR)
        }
        // A file made and removed says more than access(2), which a
        // privileged process passes on a read-only file system too.
        let probe = directory + "/.strobe-probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            return failure(
                "flightRecorder.directory \(directory) is not writable: \(ErrnoText.message(code))", errno: code)
        }
        close(descriptor)
        unlink(probe)
        return nil
    }

    /// Whether `name` is a dump's file name: `YYYYMMDDTHHMMSS.mmmZ-reason.pftrace`.
    static func isDumpName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let stamp = Array("ddddddddTdddddd.dddZ-".utf8) // d: a digit
        let suffix = Array(".pftrace".utf8)
        guard bytes.count > stamp.count + suffix.count, bytes.suffix(suffix.count).elementsEqual(suffix) else {
            return false
        }
        for (byte, pattern) in zip(bytes, stamp) {
            if pattern == UInt8(ascii: "d") {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
            } else if byte != pattern {
                return false
            }
        }
        let reason = bytes[stamp.count..<(bytes.count - suffix.count)]
        return reason.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-")
        }
    }

    /// `YYYYMMDDTHHMMSS.mmmZ` for CLOCK_REALTIME nanoseconds.
    static func timeStamp(realtime: UInt64) -> String {
        var seconds = time_t(realtime / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = Int(realtime / 1_000_000 % 1000)
        let millis =
            milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec)).\(millis)Z"
    }

    /// A path in `directory` for a dump of `reason` at `realtime` that no
    /// file holds yet.
    static func freshPath(directory: String, realtime: UInt64, reason: String) -> String {
        let base = directory + "/" + timeStamp(realtime: realtime) + "-" + TriggerText.fileNamePart(reason)
        var path = base + ".pftrace"
        var number = 2
        var info = stat()
        while stat(path, &info) == 0 {
            path = base + "-\(number).pftrace"
            number += 1
        }
        return path
    }

    /// Deletes the oldest dumps in `directory` until at most `maximumFiles`
    /// remain and they take at most `maximumBytes`, never `keeping`.
    /// Returns how many files it deleted.
    @discardableResult
    static func enforceCaps(directory: String, maximumFiles: Int, maximumBytes: Int, keeping: String) -> Int {
        guard let stream = opendir(directory) else { return 0 }
        var dumps: [(name: String, bytes: Int)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard isDumpName(name) else { continue }
            var info = stat()
            guard stat(directory + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            dumps.append((name, Int(info.st_size)))
        }
        closedir(stream)
        // Names start with the trigger's time, so they sort oldest first.
        dumps.sort { $0.name < $1.name }
        var count = dumps.count
        var bytes = dumps.reduce(0) { $0 + $1.bytes }
        var deleted = 0
        for dump in dumps where count > maximumFiles || bytes > maximumBytes {
            let path = directory + "/" + dump.name
            if path == keeping { continue }
            if unlink(path) == 0 {
                deleted += 1
                count -= 1
                bytes -= dump.bytes
            }
        }
        return deleted
    }
}
