import StrobeHistory

extension HistoryFilter {
    /// The SQL condition on `strobe_runs` (aliased `r`) with its values,
    /// each placeholder written by `placeholder` from its 1-based number.
    static func condition(
        _ filters: [HistoryFilter], firstParameter: Int = 1, placeholder: (Int) -> String
    ) -> (sql: String, values: [String]) {
        var clauses: [String] = []
        var values: [String] = []
        func next() -> String { placeholder(firstParameter + values.count) }
        for filter in filters {
            switch filter.field {
            case .suite: clauses.append("r.suite = \(next())")
            case .branch: clauses.append("r.branch = \(next())")
            case .host: clauses.append("r.host = \(next())")
            case .commit: clauses.append("r.git_commit = \(next())")
            case .tag(let key):
                let keyPlaceholder = next()
                values.append(key)
                clauses.append(
                    "EXISTS (SELECT 1 FROM strobe_run_tags t WHERE t.run = r.id AND t.key = \(keyPlaceholder) AND "
                        + "t.value = \(next()))"
                )
            }
            values.append(filter.value)
        }
        return (clauses.isEmpty ? "TRUE" : clauses.joined(separator: " AND "), values)
    }
}
