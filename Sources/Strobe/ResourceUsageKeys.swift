import CStrobe

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

    /// Argument keys of the rusage deltas attached to an interval's end.
    static let keys: [String] = [
        "rusage.user_ns", "rusage.system_ns", "rusage.voluntary_switches",
        "rusage.involuntary_switches", "rusage.minor_faults", "rusage.major_faults",
    ]

    /// Reserved name words for the keys (never valid name words).
    static func keyWord(_ index: Int) -> UInt64 { 0xFFFE_0000_0000_0000 | UInt64(index) }

    static func annotationText(_ word: UInt64) -> String {
        if word & 0xFFFF_0000_0000_0000 == 0xFFFE_0000_0000_0000 {
            let index = Int(word & 0xFFFF)
            return index < keys.count ? keys[index] : ""
        }
        return NameTable.shared.text(of: word)
    }

    static func deltas(begin: cstrobe_rusage, end: cstrobe_rusage) -> [(UInt64, Int64)] {
        func delta(_ a: UInt64, _ b: UInt64) -> Int64 { Int64(bitPattern: b &- a) }
        return [
            (keyWord(0), delta(begin.user_ns, end.user_ns)),
            (keyWord(1), delta(begin.system_ns, end.system_ns)),
            (keyWord(2), delta(begin.voluntary_switches, end.voluntary_switches)),
            (keyWord(3), delta(begin.involuntary_switches, end.involuntary_switches)),
            (keyWord(4), delta(begin.minor_faults, end.minor_faults)),
            (keyWord(5), delta(begin.major_faults, end.major_faults)),
        ]
    }
}
