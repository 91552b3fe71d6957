import StrobeEncoding

extension TraceEncoder {
    /// An encoder for this process's records (a session's drains and dumps):
    /// names and categories from the process's own tables.
    package convenience init(processID: Int32, processName: String, firstIdentifier: UInt64 = 0) {
        self.init(
            processID: processID, processName: processName, firstIdentifier: firstIdentifier,
            names: ProcessRecordNames.shared)
    }

    /// Encodes what a drain took from one thread.
    func encode(_ harvest: ThreadBuffer.Harvest, of recorder: ThreadBuffer, now: UInt64) {
        encode(harvest, serial: recorder.serial, threadID: recorder.threadID, now: now)
    }

    /// Releases what the encoder keeps for `recorder`, a thread that exited
    /// and was written out.
    func retire(_ recorder: ThreadBuffer) {
        retire(serial: recorder.serial)
    }
}

/// The text of this process's name words and categories: literals at their
/// addresses, interned names in ``NameTable``, categories in
/// ``CategoryRegistry``.
final class ProcessRecordNames: RecordNames, Sendable {
    static let shared = ProcessRecordNames()

    func text(of word: UInt64) -> String { NameTable.shared.text(of: word) }

    func utf8(of word: UInt64) -> UnsafeBufferPointer<UInt8> { NameTable.shared.utf8(of: word) }

    func categoryName(_ index: UInt32) -> String { CategoryRegistry.shared.name(of: index) }
}
