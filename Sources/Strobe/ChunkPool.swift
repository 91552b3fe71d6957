import Synchronization

/// Chunks that have been drained and can be reused, shared by the threads of
/// one session. Reusing warm memory keeps page faults off the recording path.
final class ChunkPool: Sendable {
    let chunkWords: Int
    private let free = Mutex<[Chunk]>([])

    init(chunkWords: Int) {
        self.chunkWords = chunkWords
    }

    func take() -> Chunk {
        if let chunk = free.withLock({ $0.popLast() }) { return chunk }
        return Chunk(capacity: chunkWords)
    }

    func give(_ chunks: [Chunk]) {
        guard !chunks.isEmpty else { return }
        free.withLock { $0.append(contentsOf: chunks) }
    }

    /// Allocates `count` chunks ahead of time and touches their pages.
    func prefill(_ count: Int) {
        var chunks: [Chunk] = []
        for _ in 0..<count {
            let chunk = Chunk(capacity: chunkWords)
            chunk.base.initialize(repeating: 0, count: chunkWords)
            chunks.append(chunk)
        }
        give(chunks)
    }
}
