import CProtobufC
import StrobeProtos

extension ResultsFile {
    static func encode(
        _ profile: InstructionProfile, in storage: inout MessageStorage
    ) -> UnsafeMutablePointer<Strobe__Results__InstructionProfile> {
        let message = storage.allocate(Strobe__Results__InstructionProfile.self)
        strobe__results__instruction_profile__init(message)
        (message.pointee.n_functions, message.pointee.functions) = storage.strings(profile.functions)
        // One count per function, 0 past the end of a shorter list.
        func counts(_ values: [UInt64]) -> [UInt64] {
            profile.functions.indices.map { $0 < values.count ? values[$0] : 0 }
        }
        (message.pointee.n_exclusive, message.pointee.exclusive) = storage.array(counts(profile.exclusive))
        (message.pointee.n_inclusive, message.pointee.inclusive) = storage.array(counts(profile.inclusive))
        (message.pointee.n_calls, message.pointee.calls) = storage.array(
            profile.calls.flatMap { [UInt32(clamping: $0.caller), UInt32(clamping: $0.callee)] })
        message.pointee.has_iterations = 1
        message.pointee.iterations = UInt32(clamping: profile.iterations)
        message.pointee.has_total = 1
        message.pointee.total = profile.total
        return message
    }

    static func decode(
        _ message: Strobe__Results__InstructionProfile, test: String, path: String
    ) throws(ResultsFileError) -> InstructionProfile {
        let functions = (0..<message.n_functions).map { index in
            message.functions[index].map { String(cString: $0) } ?? ""
        }
        let exclusive = Array(UnsafeBufferPointer(start: message.exclusive, count: message.n_exclusive))
        let inclusive = Array(UnsafeBufferPointer(start: message.inclusive, count: message.n_inclusive))
        guard exclusive.count == functions.count, inclusive.count == functions.count else {
            throw ResultsFileError(
                path: path,
                problem: "the instruction profile of test \(test) names \(functions.count) functions but counts "
                    + "\(exclusive.count) exclusive and \(inclusive.count) inclusive")
        }
        let flat = Array(UnsafeBufferPointer(start: message.calls, count: message.n_calls)).map { Int($0) }
        guard flat.count % 2 == 0, flat.allSatisfy({ $0 < functions.count }) else {
            throw ResultsFileError(
                path: path,
                problem: "the instruction profile of test \(test) has a call that is not a pair of its "
                    + "\(functions.count) functions")
        }
        let calls = stride(from: 0, to: flat.count, by: 2).map {
            InstructionProfile.Call(caller: flat[$0], callee: flat[$0 + 1])
        }
        return InstructionProfile(
            functions: functions, exclusive: exclusive, inclusive: inclusive, calls: calls,
            iterations: Int(message.iterations), total: message.total)
    }
}
