/// Interned values of one sequence: an array for the small dense ids
/// writers use, a dictionary for any others.
struct InternedNames<Value> {
    private var dense: [Value?] = []
    private var sparse: [UInt64: Value] = [:]
    private static var denseLimit: UInt64 { 1 << 16 }

    subscript(iid: UInt64) -> Value? {
        @inline(__always) get {
            if iid < UInt64(dense.count) { return dense[Int(iid)] }
            return sparse.isEmpty ? nil : sparse[iid]
        }
        set {
            if iid < Self.denseLimit {
                let index = Int(iid)
                if index >= dense.count { dense.append(contentsOf: repeatElement(nil, count: index - dense.count + 1)) }
                dense[index] = newValue
            } else {
                sparse[iid] = newValue
            }
        }
    }

    mutating func removeAll() {
        dense.removeAll(keepingCapacity: true)
        sparse.removeAll()
    }
}
