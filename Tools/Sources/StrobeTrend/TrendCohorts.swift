import StrobeHistory

// The positions of a trend's series and the groups that are analysed together.
extension TrendAnalysis {
    /// Runs of one suite analysed together: their groups, and per group the
    /// runs at each slot.
    struct Cohort {
        var slots: [TrendSlot]
        var groups: [String]
        /// runs[group][slot]: the group's runs at that slot, oldest first.
        var runs: [[[HistoryRun]]]
    }

    /// The cohorts of a suite's runs: one when the groups share enough
    /// commits (or there is one group), else one per group.
    static func cohorts(
        _ runs: [HistoryRun], suite: String, keys: [String], order: CommitOrder?, options: TrendOptions,
        notes: inout [String]
    ) -> [Cohort] {
        var groups: [String] = []
        var byGroup: [String: [HistoryRun]] = [:]
        for run in runs {
            let group = groupName(run, keys: keys)
            if byGroup[group] == nil { groups.append(group) }
            byGroup[group, default: []].append(run)
        }
        groups.sort()
        // A position is a commit in git order, and in time order when
        // several groups must be aligned; else each run is one.
        let byCommit = order != nil || groups.count > 1
        let partners = byCommit ? [:] : simulatedPartners(runs, keys: keys)
        func slotKey(_ run: HistoryRun) -> String {
            byCommit && !run.metadata.gitCommit.isEmpty
                ? run.metadata.gitCommit : "run:" + (partners[run.key] ?? run.key)
        }
        // Every slot of the suite, in order.
        var first: [String: (time: Int64, commit: String)] = [:]
        for run in runs {
            let key = slotKey(run)
            if let seen = first[key], seen.time <= run.metadata.timestamp { continue }
            first[key] = (run.metadata.timestamp, run.metadata.gitCommit)
        }
        let ordered = first.keys.sorted { a, b in
            if let order, let pa = order.position(of: first[a]!.commit), let pb = order.position(of: first[b]!.commit),
                pa != pb
            {
                return pa < pb
            }
            return (first[a]!.time, a) < (first[b]!.time, b)
        }
        func cohort(_ members: [String], slots: [String]) -> Cohort {
            let index = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1, $0) })
            var table = members.map { _ in Array(repeating: [HistoryRun](), count: slots.count) }
            for (g, group) in members.enumerated() {
                for run in byGroup[group] ?? [] {
                    if let slot = index[slotKey(run)] { table[g][slot].append(run) }
                }
                for slot in table[g].indices {
                    table[g][slot].sort { ($0.metadata.timestamp, $0.key) < ($1.metadata.timestamp, $1.key) }
                }
            }
            return Cohort(
                slots: slots.map { TrendSlot(commit: first[$0]!.commit, time: first[$0]!.time) }, groups: members,
                runs: table)
        }
        guard groups.count > 1 else { return [cohort(groups, slots: ordered)] }
        let slotsOf = byGroup.mapValues { Set($0.map(slotKey)) }
        let shared = ordered.filter { key in groups.allSatisfy { slotsOf[$0]!.contains(key) } }
        if shared.count >= 2 * options.detection.minimumSegment {
            let sharedKeys = Set(shared)
            let left = runs.filter { !sharedKeys.contains(slotKey($0)) }.count
            if left > 0 {
                notes.append(
                    "\(suite): \(left) run\(left == 1 ? "" : "s") at commits not measured by every one of "
                        + "\(groups.joined(separator: ", ")) left out (series are aligned commit by commit)"
                )
            }
            return [cohort(groups, slots: shared)]
        }
        notes.append(
            "\(suite): \(groups.joined(separator: ", ")) share \(shared.count) commit\(shared.count == 1 ? "" : "s"); "
                + "each is analysed alone, so no step is compared across them"
        )
        return groups.map { group in
            cohort([group], slots: ordered.filter { slotsOf[group]!.contains($0) })
        }
    }

    /// For each simulated run (`metadata.simulated`: the process that
    /// counted the night's instructions), the key of the run of the same
    /// commit and group, not simulated, nearest in time: in time order the
    /// two are one night, one position, as they are one commit in git order.
    static func simulatedPartners(_ runs: [HistoryRun], keys: [String]) -> [String: String] {
        let native = Dictionary(
            grouping: runs.filter { !$0.metadata.simulated && !$0.metadata.gitCommit.isEmpty },
            by: { [groupName($0, keys: keys), $0.metadata.gitCommit] })
        var partners: [String: String] = [:]
        for run in runs where run.metadata.simulated && !run.metadata.gitCommit.isEmpty {
            let time = run.metadata.timestamp
            let nearest = native[[groupName(run, keys: keys), run.metadata.gitCommit]]?.min {
                (abs($0.metadata.timestamp - time), $0.key) < (abs($1.metadata.timestamp - time), $1.key)
            }
            if let nearest { partners[run.key] = nearest.key }
        }
        return partners
    }

    /// The values of `run` for `keys`, joined: its group's name.
    static func groupName(_ run: HistoryRun, keys: [String]) -> String {
        keys.map { key -> String in
            switch key {
            case "host": return run.metadata.host
            case "branch": return run.branch
            case "os": return run.metadata.os
            case "cpu": return run.metadata.cpuModel
            case "build": return run.metadata.tags["build"] ?? run.metadata.buildConfiguration
            case "suite": return run.metadata.suite
            default: return run.metadata.tags[key] ?? "(no \(key))"
            }
        }.joined(separator: ", ")
    }
}

/// The repository's commits in order, found by full hash or by a prefix
/// of at least 4 hex digits.
struct CommitOrder {
    private let position: [String: Int]
    private let sorted: [String]

    init(_ commits: [String]) {
        position = Dictionary(commits.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        sorted = commits.sorted()
    }

    /// The position of `commit` (full or abbreviated), or nil.
    func position(of commit: String) -> Int? {
        if let exact = position[commit] { return exact }
        guard commit.count >= 4 else { return nil }
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < commit { low = middle + 1 } else { high = middle }
        }
        guard low < sorted.count, sorted[low].hasPrefix(commit) else { return nil }
        return position[sorted[low]]
    }
}
