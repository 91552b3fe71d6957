import PerfettoWire

extension ResourceUsageDelta {
    /// The delta that the end argument `argument` carries.
    subscript(argument: ResourceUsageArgument) -> Int64 {
        get {
            switch argument {
            case .userNanoseconds: return userNanoseconds
            case .systemNanoseconds: return systemNanoseconds
            case .voluntarySwitches: return voluntarySwitches
            case .involuntarySwitches: return involuntarySwitches
            case .minorFaults: return minorFaults
            case .majorFaults: return majorFaults
            }
        }
        set {
            switch argument {
            case .userNanoseconds: userNanoseconds = newValue
            case .systemNanoseconds: systemNanoseconds = newValue
            case .voluntarySwitches: voluntarySwitches = newValue
            case .involuntarySwitches: involuntarySwitches = newValue
            case .minorFaults: minorFaults = newValue
            case .majorFaults: majorFaults = newValue
            }
        }
    }
}
