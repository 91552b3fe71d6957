import PerfettoWire

/// Builds a ``CPUProfile`` from a trace's bytes, by hand: the packets'
/// sequence ids, flags and timestamps, their interned profile tables and
/// their `PerfSample`s; every other field is skipped. Interned tables are
/// per sequence and emptied when a packet clears the sequence's state, as
/// in Perfetto's trace processor. A cut or malformed packet ends the
/// reading, as it ends ``TraceReader``'s.
struct CPUProfileParser {
    private(set) var profile = CPUProfile()
    /// When set, samples are counted here (those inside `within`, when it
    /// is set) instead of kept in the profile: a streaming export's memory
    /// then grows with the distinct stacks, not with the samples.
    var counts: PprofExport.SampleCounts?
    /// The time ranges on each thread whose samples `counts` counts.
    var within: ThreadTimeRanges?
    /// Samples whose call stack resolved, counted or kept.
    private(set) var sampleCount = 0
    /// Whether a malformed packet ended the reading: the parts of a file
    /// after it are not read.
    private(set) var isStopped = false

    private struct Tables {
        var strings: [UInt32: [UInt64: String]] = [:]
        var mappings: [UInt64: Int] = [:]
        var frames: [UInt64: Int] = [:]
        var callstacks: [UInt64: (stack: Int, frames: Int)?] = [:]
    }

    private var tables: [UInt32: Tables] = [:]
    private var functionIndex: [String: Int] = [:]
    private var mappingIndex: [CPUProfile.Mapping: Int] = [:]
    private var stackIndex: [[Int]: Int] = [:]
    private var frameIndex: [CPUProfile.Frame: Int] = [:]
    private var frameStackIndex: [[Int]: Int] = [:]

    typealias Fields = PerfettoWire.ProfileInternedData

    /// Reads the packets in `count` bytes at `base`, a whole file or one
    /// part of it after another, and returns how many bytes it read: in a
    /// part that is not the last, it stops at the first field it cannot
    /// read whole, as ``TraceBuilder/consume(_:count:origin:isLast:)`` does.
    @discardableResult
    mutating func consume(_ base: UnsafePointer<UInt8>, count: Int, isLast: Bool = true) -> Int {
        guard !isStopped else { return count }
        var reader = WireReader(base, from: 0, to: count)
        while !reader.isAtEnd {
            let start = reader.position
            var packet: Range<Int>?
            var isWhole = false
            if let key = reader.varint() {
                if key == PerfettoWire.WireType.tag(PerfettoWire.Trace.packet, PerfettoWire.WireType.lengthDelimited) {
                    packet = reader.lengthDelimited()
                    isWhole = packet != nil
                } else {
                    isWhole = reader.skip(wireType: key & 7)
                }
            }
            if !isWhole, !isLast { return start }
            guard isWhole, packet.map({ self.packet(base, $0) }) ?? true else {
                isStopped = true
                return count
            }
        }
        return count
    }

    /// Reads one packet; false when it is malformed.
    private mutating func packet(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Bool {
        typealias Packet = PerfettoWire.TracePacket
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var sequence: UInt32 = 0
        var flags: UInt64 = 0
        var timestamp: UInt64 = 0
        var interned: Range<Int>?
        var sample: Range<Int>?
        var event: Range<Int>?
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return false }
            switch key {
            case WireType.tag(Packet.timestamp, WireType.varint):
                guard let value = reader.varint() else { return false }
                timestamp = value
            case WireType.tag(Packet.trustedPacketSequenceID, WireType.varint):
                guard let value = reader.varint() else { return false }
                sequence = UInt32(truncatingIfNeeded: value)
            case WireType.tag(Packet.sequenceFlags, WireType.varint):
                guard let value = reader.varint() else { return false }
                flags = value
            case WireType.tag(Packet.internedData, WireType.lengthDelimited):
                interned = reader.lengthDelimited()
                if interned == nil { return false }
            case WireType.tag(PerfettoWire.ProfilePacket.perfSample, WireType.lengthDelimited):
                sample = reader.lengthDelimited()
                if sample == nil { return false }
            case WireType.tag(Packet.trackEvent, WireType.lengthDelimited):
                event = reader.lengthDelimited()
                if event == nil { return false }
            default:
                guard reader.skip(wireType: key & 7) else { return false }
            }
        }
        if flags & UInt64(PerfettoWire.SequenceFlags.incrementalStateCleared) != 0 { tables[sequence] = Tables() }
        if let interned, tables[sequence] != nil { readInterned(base, interned, sequence: sequence) }
        if let sample { readSample(base, sample, sequence: sequence, time: timestamp) }
        if let event { readMark(base, event) }
        return true
    }

    private mutating func readInterned(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, sequence: UInt32) {
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var table = tables[sequence] ?? Tables()
        while !reader.isAtEnd {
            guard let key = reader.varint() else { break }
            let field = UInt32(truncatingIfNeeded: key >> 3)
            guard key & 7 == 2, let entry = reader.lengthDelimited() else {
                guard reader.skip(wireType: key & 7) else { break }
                continue
            }
            var values: [UInt32: UInt64] = [:]
            var repeated: [UInt64] = []
            var text: String?
            var fields = WireReader(base, from: entry.lowerBound, to: entry.upperBound)
            while !fields.isAtEnd {
                guard let entryKey = fields.varint() else { break }
                let number = UInt32(truncatingIfNeeded: entryKey >> 3)
                if entryKey & 7 == 0, let value = fields.varint() {
                    if number == 2 && field == Fields.callstacks || number == 7 && field == Fields.mappings {
                        repeated.append(value)
                    } else {
                        values[number] = value
                    }
                } else if entryKey & 7 == 2, let bytes = fields.lengthDelimited() {
                    if number == 2 && field == Fields.callstacks || number == 7 && field == Fields.mappings {
                        var packed = WireReader(base, from: bytes.lowerBound, to: bytes.upperBound)
                        while !packed.isAtEnd, let value = packed.varint() { repeated.append(value) }
                    } else if number == PerfettoWire.InternedString.text {
                        text = field == Fields.buildIDs ? Self.buildID(base, bytes) : fields.string(bytes)
                    }
                } else if !fields.skip(wireType: entryKey & 7) {
                    break
                }
            }
            guard let iid = values[1] else { continue }
            switch field {
            case Fields.functionNames, Fields.buildIDs, Fields.mappingPaths:
                table.strings[field, default: [:]][iid] = text ?? ""
            case Fields.mappings:
                let path = repeated.compactMap { table.strings[Fields.mappingPaths]?[$0] }.joined(separator: "/")
                let build = values[PerfettoWire.Mapping.buildID].flatMap { table.strings[Fields.buildIDs]?[$0] } ?? ""
                table.mappings[iid] = mapping(
                    CPUProfile.Mapping(
                        path: path, buildID: build, start: values[PerfettoWire.Mapping.start] ?? 0,
                        end: values[PerfettoWire.Mapping.end] ?? 0,
                        fileOffset: values[PerfettoWire.Mapping.startOffset] ?? 0))
            case Fields.frames:
                if let name = values[PerfettoWire.Frame.functionNameID].flatMap({
                    table.strings[Fields.functionNames]?[$0]
                }) {
                    table.frames[iid] = frame(
                        CPUProfile.Frame(
                            function: function(name),
                            mapping: values[PerfettoWire.Frame.mappingID].flatMap { table.mappings[$0] },
                            relativePC: values[PerfettoWire.Frame.relativePC] ?? 0))
                }
            case Fields.callstacks:
                let frames = repeated.map { table.frames[$0] }
                if frames.contains(where: { $0 == nil }) {
                    table.callstacks[iid] = .some(nil)
                } else {
                    let resolved = frames.map { $0! }
                    table.callstacks[iid] = (stack(resolved.map { profile.frames[$0].function }), frameStack(resolved))
                }
            default:
                break
            }
        }
        tables[sequence] = table
    }

    /// A build id as lowercase hex: written as its raw bytes, as Perfetto's
    /// schema has it, or (by Strobe before it did) already as hex text.
    static func buildID(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> String {
        let bytes = UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
        let decimal = UInt8(ascii: "0")...UInt8(ascii: "9")
        let letters = UInt8(ascii: "a")...UInt8(ascii: "f")
        let isHex =
            !bytes.isEmpty && bytes.count % 2 == 0
            && bytes.allSatisfy { decimal.contains($0) || letters.contains($0) }
        if isHex { return String(decoding: bytes, as: UTF8.self) }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func readSample(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, sequence: UInt32, time: UInt64)
    {
        typealias Sample = PerfettoWire.PerfSample
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var tid: UInt64 = 0
        var cpu: UInt64 = 0
        var callstack: UInt64?
        var lost: UInt64 = 0
        while !reader.isAtEnd {
            guard let key = reader.varint() else { break }
            guard key & 7 == 0, let value = reader.varint() else {
                guard reader.skip(wireType: key & 7) else { break }
                continue
            }
            switch UInt32(truncatingIfNeeded: key >> 3) {
            case Sample.tid: tid = value
            case Sample.cpu: cpu = value
            case Sample.callstackIID: callstack = value
            case Sample.kernelRecordsLost: lost = value
            default: break
            }
        }
        // Not a sample: a count of samples lost.
        if lost > 0 {
            profile.lostRecords &+= Int(truncatingIfNeeded: lost)
            return
        }
        guard let callstack, let entry = tables[sequence]?.callstacks[callstack], let stack = entry else {
            profile.unresolvedSamples += 1
            return
        }
        let sample = CPUProfile.Sample(
            time: time, tid: Int64(truncatingIfNeeded: tid), cpu: UInt32(truncatingIfNeeded: cpu),
            stack: stack.stack, frameStack: stack.frames)
        sampleCount += 1
        if counts == nil {
            profile.samples.append(sample)
        } else if within?.contains(tid: sample.tid, time: sample.time) ?? true {
            counts?.add(sample)
        }
    }

    /// The profile's closing instant: its name and annotations spelled out.
    private mutating func readMark(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) {
        typealias Event = PerfettoWire.TrackEvent
        typealias Annotation = PerfettoWire.DebugAnnotation
        var reader = WireReader(base, from: range.lowerBound, to: range.upperBound)
        var name: String?
        var annotations: [(String, Range<Int>)] = []
        while !reader.isAtEnd {
            guard let key = reader.varint() else { return }
            if key == WireType.tag(Event.name, WireType.lengthDelimited), let text = reader.lengthDelimited() {
                name = reader.string(text)
            } else if key == WireType.tag(Event.debugAnnotations, WireType.lengthDelimited),
                let annotation = reader.lengthDelimited()
            {
                annotations.append(("", annotation))
            } else if !reader.skip(wireType: key & 7) {
                return
            }
        }
        guard name == CPUProfile.markName else { return }
        for (_, range) in annotations {
            var fields = WireReader(base, from: range.lowerBound, to: range.upperBound)
            var key: String?
            var number: UInt64?
            var text: String?
            while !fields.isAtEnd {
                guard let tag = fields.varint() else { break }
                switch tag {
                case WireType.tag(Annotation.name, WireType.lengthDelimited):
                    guard let bytes = fields.lengthDelimited() else { return }
                    key = fields.string(bytes)
                case WireType.tag(Annotation.stringValue, WireType.lengthDelimited):
                    guard let bytes = fields.lengthDelimited() else { return }
                    text = fields.string(bytes)
                case WireType.tag(Annotation.intValue, WireType.varint):
                    number = fields.varint()
                default:
                    guard fields.skip(wireType: tag & 7) else { return }
                }
            }
            switch key {
            case "method": profile.method = text
            case "frequency_hz": profile.frequency = number.map { Int(truncatingIfNeeded: $0) }
            case "lost_samples": profile.lostSamples = number.map { Int(truncatingIfNeeded: $0) }
            case "truncated_stacks": profile.truncatedStacks = number.map { Int(truncatingIfNeeded: $0) }
            case "fallback_reason": profile.fallbackReason = text
            case "unsampled_threads": profile.unsampledThreads = number.map { Int(truncatingIfNeeded: $0) } ?? 0
            case "sampler_failure": profile.samplerFailure = text
            default: break
            }
        }
    }

    private mutating func function(_ name: String) -> Int {
        if let index = functionIndex[name] { return index }
        functionIndex[name] = profile.functions.count
        profile.functions.append(name)
        return profile.functions.count - 1
    }

    private mutating func mapping(_ mapping: CPUProfile.Mapping) -> Int {
        if let index = mappingIndex[mapping] { return index }
        mappingIndex[mapping] = profile.mappings.count
        profile.mappings.append(mapping)
        return profile.mappings.count - 1
    }

    private mutating func frame(_ frame: CPUProfile.Frame) -> Int {
        if let index = frameIndex[frame] { return index }
        frameIndex[frame] = profile.frames.count
        profile.frames.append(frame)
        return profile.frames.count - 1
    }

    private mutating func frameStack(_ frames: [Int]) -> Int {
        if let index = frameStackIndex[frames] { return index }
        frameStackIndex[frames] = profile.frameStacks.count
        profile.frameStacks.append(frames)
        return profile.frameStacks.count - 1
    }

    private mutating func stack(_ frames: [Int]) -> Int {
        if let index = stackIndex[frames] { return index }
        stackIndex[frames] = profile.stacks.count
        profile.stacks.append(frames)
        return profile.stacks.count - 1
    }
}

private typealias WireType = PerfettoWire.WireType
