import CStrobeLayout
import PerfettoWire

/// The rusage attachment: loading it and the argument keys of its deltas.
enum ResourceUsageKeys {
    static func load(_ words: UnsafePointer<UInt64>) -> cstrobe_rusage {
        var usage = cstrobe_rusage()
        usage.user_ns = words[0]
        usage.system_ns = words[1]
        usage.voluntary_switches = words[2]
        usage.involuntary_switches = words[3]
        usage.minor_faults = words[4]
        usage.major_faults = words[5]
        return usage
    }

    /// Reserved name words for the argument keys of the deltas (never valid
    /// name words).
    static func keyWord(_ argument: ResourceUsageArgument) -> UInt64 {
        0xFFFE_0000_0000_0000 | UInt64(argument.rawValue)
    }

    /// The text of an argument key's name word: a reserved rusage key or a
    /// name.
    static func annotationText(_ word: UInt64, _ names: any RecordNames) -> String {
        if word & 0xFFFF_0000_0000_0000 == 0xFFFE_0000_0000_0000 {
            return ResourceUsageArgument(rawValue: Int(word & 0xFFFF))?.name ?? ""
        }
        return names.text(of: word)
    }

    static func deltas(begin: cstrobe_rusage, end: cstrobe_rusage) -> [(UInt64, Int64)] {
        func delta(_ a: UInt64, _ b: UInt64) -> Int64 { Int64(bitPattern: b &- a) }
        return [
            (keyWord(.userNanoseconds), delta(begin.user_ns, end.user_ns)),
            (keyWord(.systemNanoseconds), delta(begin.system_ns, end.system_ns)),
            (keyWord(.voluntarySwitches), delta(begin.voluntary_switches, end.voluntary_switches)),
            (keyWord(.involuntarySwitches), delta(begin.involuntary_switches, end.involuntary_switches)),
            (keyWord(.minorFaults), delta(begin.minor_faults, end.minor_faults)),
            (keyWord(.majorFaults), delta(begin.major_faults, end.major_faults)),
        ]
    }
}
