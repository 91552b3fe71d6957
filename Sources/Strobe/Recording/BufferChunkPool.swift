import StrobeEncoding
import Synchronization

/// Chunks that have been drained and can be reused. Reusing warm memory keeps
/// page faults off the recording path, so pools outlive sessions: one pool per
/// chunk size, trimmed to ``retainedBytes`` when a session ends.
final class BufferChunkPool: Sendable {
    let chunkWords: Int
    private let free = SanitizedMutex<[BufferChunk]>([])

    /// Memory a pool keeps for the next session.
    static let retainedBytes = 64 << 20

    private static let pools = SanitizedMutex<[Int: BufferChunkPool]>([:])

    /// The process's pool for chunks of `chunkWords` words.
    static func shared(chunkWords: Int) -> BufferChunkPool {
        pools.withLock { pools in
            if let pool = pools[chunkWords] { return pool }
            let pool = BufferChunkPool(chunkWords: chunkWords)
            pools[chunkWords] = pool
            return pool
        }
    }

    private init(chunkWords: Int) {
        self.chunkWords = chunkWords
    }

    /// Frees chunks beyond what the pool keeps between sessions.
    func trim() {
        let keep = max(Self.retainedBytes / (chunkWords * 8), 0)
        let released: [BufferChunk] = free.withLock { free in
            guard free.count > keep else { return [] }
            let extra = Array(free[keep...])
            free.removeLast(free.count - keep)
            return extra
        }
        _ = released
    }

    func take() -> BufferChunk {
        if let chunk = free.withLock({ $0.popLast() }) { return chunk }
        return BufferChunk(capacity: chunkWords)
    }

    func give(_ chunks: [BufferChunk]) {
        guard !chunks.isEmpty else { return }
        free.withLock { $0.append(contentsOf: chunks) }
    }

    /// Makes sure `count` chunks are ready, their pages touched.
    func prefill(_ count: Int) {
        let missing = count - free.withLock { $0.count }
        guard missing > 0 else { return }
        var chunks: [BufferChunk] = []
        for _ in 0..<missing {
            let chunk = BufferChunk(capacity: chunkWords)
            chunk.base.initialize(repeating: 0, count: chunkWords)
            chunks.append(chunk)
        }
        give(chunks)
    }
}
