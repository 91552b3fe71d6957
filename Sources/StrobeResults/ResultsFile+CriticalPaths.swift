import CProtobufC
import StrobeProtos

extension ResultsFile {
    static func encode(
        _ record: CriticalPathRecord, in storage: inout MessageStorage
    ) -> UnsafeMutablePointer<Strobe__Results__CriticalPathRecord>? {
        let message = storage.allocate(Strobe__Results__CriticalPathRecord.self)
        strobe__results__critical_path_record__init(message)
        message.pointee.interval = storage.string(record.interval)
        let iterations: [UnsafeMutablePointer<Strobe__Results__CriticalPathIteration>?] = record.iterations.map {
            iteration in
            let entry = storage.allocate(Strobe__Results__CriticalPathIteration.self)
            strobe__results__critical_path_iteration__init(entry)
            (entry.pointee.n_names, entry.pointee.names) = storage.strings(iteration.names)
            let waits: [UnsafeMutablePointer<Strobe__Results__CriticalPathWait>?] = iteration.waits.map { wait in
                let item = storage.allocate(Strobe__Results__CriticalPathWait.self)
                strobe__results__critical_path_wait__init(item)
                if let waiter = wait.waiter { item.pointee.waiter = storage.string(waiter) }
                item.pointee.waited_for = storage.string(wait.waitedFor)
                return item
            }
            (entry.pointee.n_waits, entry.pointee.waits) = storage.array(waits)
            return entry
        }
        (message.pointee.n_iterations, message.pointee.iterations) = storage.array(iterations)
        return message
    }

    static func decode(
        _ message: Strobe__Results__CriticalPathRecord, test: String, path: String
    ) throws(ResultsFileError) -> CriticalPathRecord {
        guard let interval = message.interval.map({ String(cString: $0) }), !interval.isEmpty else {
            throw ResultsFileError(path: path, problem: "a critical path of test \(test) names no interval")
        }
        var iterations: [CriticalPathRecord.Iteration] = []
        for index in 0..<message.n_iterations {
            guard let iteration = message.iterations[index]?.pointee else { continue }
            let names = (0..<iteration.n_names).compactMap { iteration.names[$0].map { String(cString: $0) } }
            var waits: [CriticalPathRecord.Wait] = []
            for waitIndex in 0..<iteration.n_waits {
                guard let wait = iteration.waits[waitIndex]?.pointee else { continue }
                guard let waitedFor = wait.waited_for.map({ String(cString: $0) }) else {
                    throw ResultsFileError(
                        path: path,
                        problem: "the critical path of \(interval) in test \(test) has a wait for no interval")
                }
                waits.append(
                    CriticalPathRecord.Wait(waiter: wait.waiter.map { String(cString: $0) }, waitedFor: waitedFor))
            }
            iterations.append(CriticalPathRecord.Iteration(names: names, waits: waits))
        }
        return CriticalPathRecord(interval: interval, iterations: iterations)
    }
}
