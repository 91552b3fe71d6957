import StrobeHistory
import StrobeResults

/// Runs of two builds mixed in one history: a tag whose values split the
/// runs into groups that each span the whole time range, as a pinned
/// reference build measured beside each night's build does
/// (`--tag build=reference` and `--tag build=candidate`).
///
/// A trend over both at once reads the pinned build's flat series into the
/// changing one and can hide a real change, so ``TrendAnalysis`` looks for
/// such a split whenever no reference was named: a split whose values
/// include one that names a pinned build (``pinnedValues``) makes those runs
/// the reference, and any other split is refused with the flag to add.
struct InterleavedBuilds: Sendable {
    /// The tag whose values split the runs.
    var key: String
    /// Each value and its number of runs, most runs first.
    var values: [(value: String, runs: Int)]

    /// Values that name a pinned build, in the order they are preferred.
    static let pinnedValues = ["reference", "pinned", "control"]

    /// The value naming a pinned build, when one of the split's does.
    var pinnedValue: String? {
        for pinned in Self.pinnedValues {
            if let match = values.first(where: { $0.value.lowercased() == pinned }) { return match.value }
        }
        return nil
    }

    /// "build (candidate: 30 runs, reference: 30 runs)".
    var summary: String {
        "\(key) (" + values.map { "\($0.value): \($0.runs) run\($0.runs == 1 ? "" : "s")" }.joined(separator: ", ")
            + ")"
    }

    /// The tags of `runs` that split them into interleaved groups, by key:
    /// every run carries the tag, it has two to four values, each value has
    /// at least two runs, and each value has runs in both the older and the
    /// newer half of the runs by time. Tags in `ignoring` are left out (the
    /// series are already split by them).
    static func find(in runs: [HistoryRun], ignoring: Set<String> = []) -> [InterleavedBuilds] {
        guard runs.count >= 4 else { return [] }
        let ordered = runs.sorted { ($0.metadata.timestamp, $0.key) < ($1.metadata.timestamp, $1.key) }
        let half = ordered.count / 2
        let keys = Set(ordered.flatMap(\.metadata.tags.keys)).subtracting(ignoring)
        var found: [InterleavedBuilds] = []
        for key in keys.sorted() {
            let values = ordered.map { $0.metadata.tags[key] }
            guard values.allSatisfy({ $0 != nil }) else { continue }
            let distinct = Set(values.compactMap { $0 })
            guard (2...4).contains(distinct.count) else { continue }
            let older = Set(values[..<half].compactMap { $0 })
            let newer = Set(values[half...].compactMap { $0 })
            let counts = distinct.map { value in (value: value, runs: values.filter { $0 == value }.count) }
            guard counts.allSatisfy({ $0.runs >= 2 }), distinct.isSubset(of: older), distinct.isSubset(of: newer)
            else { continue }
            found.append(
                InterleavedBuilds(
                    key: key, values: counts.sorted { ($1.runs, $0.value) < ($0.runs, $1.value) }))
        }
        return found
    }
}
