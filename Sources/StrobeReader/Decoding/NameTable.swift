import StrobeFormatting

/// Interval and instant names, each once: events refer to them by index. A
/// builder and the store that reads its events share one table, so that a
/// name is looked up where it is needed and copied nowhere.
final class NameTable {
    private var table = UniqueTexts(startingWith: [""])

    /// The names; index 0 is the empty name.
    var names: [String] { table.texts }

    /// The index of `name`, adding it when new.
    func intern(_ name: String) -> UInt32 {
        UInt32(table.index(of: name))
    }

    /// The name at `index`.
    subscript(index: UInt32) -> String {
        @inline(__always) get { table.texts[Int(index)] }
    }
}
