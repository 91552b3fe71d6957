import CProtobufC
import StrobeProtos

extension ResultsFile {
    static func encode(
        _ profile: InstructionProfile, in storage: inout MessageStorage
    ) -> UnsafeMutablePointer<Strobe__Results__InstructionProfile> {
        let message = storage.allocate(Strobe__Results__InstructionProfile.self)
        strobe__results__instruction_profile__init(message)
        let functions = storage.allocateArray(UnsafeMutablePointer<CChar>?.self, count: profile.functions.count)
        for (index, name) in profile.functions.enumerated() { functions[index] = storage.string(name) }
        message.pointee.n_functions = profile.functions.count
        message.pointee.functions = functions
        func counts(_ values: [UInt64]) -> (Int, UnsafeMutablePointer<UInt64>) {
            let array = storage.allocateArray(UInt64.self, count: profile.functions.count)
            for index in 0..<profile.functions.count { array[index] = index < values.count ? values[index] : 0 }
            return (profile.functions.count, array)
        }
        (message.pointee.n_exclusive, message.pointee.exclusive) = counts(profile.exclusive)
        (message.pointee.n_inclusive, message.pointee.inclusive) = counts(profile.inclusive)
        let calls = storage.allocateArray(UInt32.self, count: profile.calls.count * 2)
        for (index, call) in profile.calls.enumerated() {
            calls[2 * index] = UInt32(clamping: call.caller)
            calls[2 * index + 1] = UInt32(clamping: call.callee)
        }
        message.pointee.n_calls = profile.calls.count * 2
        message.pointee.calls = calls
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
