/// The field numbers of pprof's messages (perftools.profiles), as the
/// encoder writes them.
extension PprofExport {
    /// `Profile`.
    enum Field {
        static let sampleType: UInt32 = 1
        static let sample: UInt32 = 2
        static let mapping: UInt32 = 3
        static let location: UInt32 = 4
        static let function: UInt32 = 5
        static let stringTable: UInt32 = 6
        static let timeNanos: UInt32 = 9
        static let durationNanos: UInt32 = 10
        static let periodType: UInt32 = 11
        static let period: UInt32 = 12
    }

    /// `Sample`.
    enum SampleField {
        static let locationID: UInt32 = 1
        static let value: UInt32 = 2
        static let label: UInt32 = 3
    }

    /// `Label`.
    enum LabelField {
        static let key: UInt32 = 1
        static let str: UInt32 = 2
        static let num: UInt32 = 3
    }

    /// `Mapping`.
    enum MappingField {
        static let id: UInt32 = 1
        static let memoryStart: UInt32 = 2
        static let memoryLimit: UInt32 = 3
        static let fileOffset: UInt32 = 4
        static let filename: UInt32 = 5
        static let buildID: UInt32 = 6
        static let hasFunctions: UInt32 = 7
    }

    /// `Location`.
    enum LocationField {
        static let id: UInt32 = 1
        static let mappingID: UInt32 = 2
        static let address: UInt32 = 3
        static let line: UInt32 = 4
    }

    /// `Line`.
    enum LineField {
        static let functionID: UInt32 = 1
    }

    /// `Function`.
    enum FunctionField {
        static let id: UInt32 = 1
        static let name: UInt32 = 2
        static let systemName: UInt32 = 3
    }
}
