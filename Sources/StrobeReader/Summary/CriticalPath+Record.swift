import StrobeResults

extension CriticalPathRecord.Iteration {
    /// What `paths` (the critical paths of one iteration's instances of an
    /// interval) crossed: the names of the intervals on them and their
    /// waits, each once.
    public init(_ paths: [CriticalPath]) {
        self.init(
            names: paths.flatMap { $0.segments.compactMap(\.name) }, waits: paths.flatMap { $0.waits.map(\.recorded) })
    }
}
