import StrobeFormatting

extension TraceSummary {
    /// A flight-recorder trigger marked in the trace (an instant named
    /// `strobe.trigger`), with what the trace holds around it.
    public struct Trigger: Sendable, Codable, Hashable {
        /// Why the dump was taken, such as `frame over 33ms`.
        public var reason: String
        /// When, in nanoseconds since the trace's first event.
        public var at: UInt64
        /// When, in CLOCK_BOOTTIME nanoseconds.
        public var time: UInt64
        /// The thread it fired on, when known.
        public var thread: String?
        /// The interval that ran too long, for an interval trigger.
        public var interval: IntervalAround?
        /// The counter and the value that crossed the threshold, for a
        /// counter trigger.
        public var counter: String?
        /// The counter's value.
        public var value: Double?
        /// The threshold, in nanoseconds for an interval, in the counter's
        /// unit for a counter.
        public var threshold: Double?
        /// How much of the trace lies before the trigger, in nanoseconds.
        public var coveredBefore: UInt64
        /// How much of the trace lies after it, in nanoseconds: to its last
        /// event, or to when the flight recorder stopped recording for the
        /// dump when that is later.
        public var coveredAfter: UInt64
        /// What the flight recorder was asked to keep before and after, in
        /// nanoseconds.
        public var askedBefore: UInt64?
        /// See ``askedBefore``.
        public var askedAfter: UInt64?
        /// Triggers that fired while the dump recorded and were counted, not
        /// dumped.
        public var suppressedTriggers: UInt64?
    }

    /// An interval at a trigger, with its longest children.
    public struct IntervalAround: Sendable, Codable, Hashable {
        /// The interval's name.
        public var name: String
        /// Start, in nanoseconds since the trace's first event.
        public var start: UInt64
        /// Duration in nanoseconds.
        public var duration: UInt64
        /// Its direct children, longest first (at most 5): name and duration.
        public var longestChildren: [Child]

        /// A direct child of the interval.
        public struct Child: Sendable, Codable, Hashable {
            /// Its name.
            public var name: String
            /// Its duration in nanoseconds.
            public var duration: UInt64
        }
    }

    /// The name of the instant that marks a trigger.
    public static let triggerMarkName = "strobe.trigger"

    /// The triggers marked in `trace`, in time order.
    static func triggers(in trace: ParsedTrace) -> [Trigger] {
        let marks = trace.instants.filter { $0.name == triggerMarkName }
        guard !marks.isEmpty else { return [] }
        var first = UInt64.max
        var last: UInt64 = 0
        for interval in trace.intervals {
            first = min(first, interval.start)
            last = max(last, interval.end ?? interval.start)
        }
        for instant in trace.instants where instant.name != triggerMarkName {
            first = min(first, instant.time)
            last = max(last, instant.time)
        }
        for series in trace.counters {
            if let sample = series.samples.first { first = min(first, sample.time) }
            if let sample = series.samples.last { last = max(last, sample.time) }
        }
        let threadNames = Dictionary(trace.threads.map { ($0.tid, $0.name) }, uniquingKeysWith: { a, _ in a })
        return marks.sorted { $0.time < $1.time }.map { mark in
            let origin = min(first, mark.time)
            func number(_ key: String) -> Double? { mark.arguments[key]?.number }
            // A time or a count, when it is one (a damaged file may hold anything).
            func nanoseconds(_ key: String) -> UInt64? {
                guard let value = number(key), value.isFinite, value >= 0, value < 1.8e19 else { return nil }
                return UInt64(value)
            }
            var trigger = Trigger(
                reason: mark.arguments["reason"]?.description ?? "trigger", at: mark.time - origin, time: mark.time,
                thread: mark.tid.map { threadNames[$0] ?? "thread \($0)" },
                coveredBefore: mark.time - origin,
                coveredAfter: max(last, mark.time, nanoseconds("recorded_until_ns") ?? 0) - mark.time,
                askedBefore: nanoseconds("before_ns"), askedAfter: nanoseconds("after_ns"),
                suppressedTriggers: nanoseconds("suppressed_triggers"))
            if case .string(let name) = mark.arguments["interval"] {
                trigger.threshold = number("threshold_ns")
                trigger.interval = around(name, endingAt: mark.time, tid: mark.tid, in: trace, origin: origin)
            }
            if case .string(let name) = mark.arguments["counter"] {
                trigger.counter = name
                trigger.value = number("value")
                trigger.threshold = number("threshold")
            }
            return trigger
        }
    }

    /// The interval named `name` that ends at `time` (the nearest end, on
    /// the trigger's thread when it has one), with its longest children.
    private static func around(
        _ name: String, endingAt time: UInt64, tid: Int64?, in trace: ParsedTrace, origin: UInt64
    ) -> IntervalAround? {
        func distance(_ interval: Interval) -> UInt64 {
            guard let end = interval.end else { return .max }
            return end > time ? end - time : time - end
        }
        let candidates = trace.intervals(named: name).filter { $0.end != nil }
        let onThread = candidates.filter { tid != nil && $0.tid == tid }
        guard let interval = (onThread.isEmpty ? candidates : onThread).min(by: { distance($0) < distance($1) }),
            let end = interval.end
        else { return nil }
        let children = trace.intervals.filter { child in
            child.track == interval.track && child.depth == interval.depth + 1 && child.start >= interval.start
                && (child.end ?? .max) <= end
        }
        let longest = children.sorted { ($0.duration ?? 0) > ($1.duration ?? 0) }.prefix(5).map {
            IntervalAround.Child(name: $0.name, duration: $0.duration ?? 0)
        }
        return IntervalAround(
            name: interval.name, start: interval.start - min(origin, interval.start), duration: interval.duration ?? 0,
            longestChildren: Array(longest))
    }

    /// The triggers as text, one block each.
    func renderTriggers() -> String? {
        guard !triggers.isEmpty else { return nil }
        return triggers.map { trigger in
            var lines = ["Trigger: \(trigger.reason)"]
            var at = "  at        \(HumanFormat.duration(Double(trigger.at))) into the trace"
            if let thread = trigger.thread { at += ", on thread \(thread)" }
            lines.append(at)
            if let interval = trigger.interval {
                var text = "  interval  \(interval.name): \(HumanFormat.duration(Double(interval.duration)))"
                text += ", from \(HumanFormat.duration(Double(interval.start)))"
                if let threshold = trigger.threshold { text += " (threshold \(HumanFormat.duration(threshold)))" }
                lines.append(text)
                if !interval.longestChildren.isEmpty {
                    let children = interval.longestChildren.map {
                        "\($0.name) \(HumanFormat.duration(Double($0.duration)))"
                    }
                    lines.append("  inside    " + children.joined(separator: ", "))
                }
            }
            if let counter = trigger.counter {
                var text = "  counter   \(counter) = \(trigger.value.map { HumanFormat.fixed($0) } ?? "?")"
                if let threshold = trigger.threshold { text += " (threshold \(HumanFormat.fixed(threshold)))" }
                lines.append(text)
            }
            var covered =
                "  covered   \(HumanFormat.duration(Double(trigger.coveredBefore))) before, "
                + "\(HumanFormat.duration(Double(trigger.coveredAfter))) after"
            if let before = trigger.askedBefore, let after = trigger.askedAfter {
                covered +=
                    " (asked for \(HumanFormat.duration(Double(before))) and \(HumanFormat.duration(Double(after))))"
            }
            lines.append(covered)
            if let suppressed = trigger.suppressedTriggers, suppressed > 0 {
                lines.append(
                    "  also      \(suppressed) more trigger\(suppressed == 1 ? "" : "s") meanwhile, counted, not dumped"
                )
            }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }
}
