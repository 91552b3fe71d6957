/// Interval and instant names, each once: events refer to them by index. A
/// builder and the store that reads its events share one table, so that a
/// name is looked up where it is needed and copied nowhere.
final class NameTable {
    /// The names; index 0 is the empty name.
    private(set) var names: [String] = [""]
    private var indexes: [String: UInt32] = ["": 0]

    /// The index of `name`, adding it when new.
    func intern(_ name: String) -> UInt32 {
        if let known = indexes[name] { return known }
        let index = UInt32(names.count)
        names.append(name)
        indexes[name] = index
        return index
    }

    /// The name at `index`.
    subscript(index: UInt32) -> String {
        @inline(__always) get { names[Int(index)] }
    }
}
