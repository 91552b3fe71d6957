import Foundation
import StrobeTestSupport
import StrobeTestTraits
import Testing

@testable import Strobe

/// A flight recorder holds at most its ring, whatever size it is given.
@Suite(.serialized, .processWide)
struct RingBoundTests {
    @Test func ringSizesRoundToWholeChunks() {
        for size in [1, 4095, 4096, 8191, 8192, 8193, 64 << 10, (128 << 10) + 1, 192 << 10, 1 << 20, 32 << 20, 1 << 30]
        {
            let (chunk, chunks) = SessionWriter.ring(for: size)
            #expect(chunk >= SessionWriter.minimumChunkBytes && chunk <= SessionWriter.maximumChunkBytes)
            #expect(chunk & (chunk - 1) == 0, "a chunk is a power of two")
            #expect(chunks >= 2)
            let held = chunk * chunks
            #expect(held >= min(size, 1 << 30), "the ring holds at least the size asked for")
            #expect(held < max(size, 8192) + chunk, "\(size): rounded up by less than one chunk")
        }
    }

    /// One thread records far more than the ring holds, for ring sizes from
    /// one byte to many chunks, odd and even; the dump stays within the ring
    /// plus one chunk and a fixed overhead, resident memory stays flat, and
    /// the newest events are all there, every interval with its end.
    @Test(.enabled(if: OfficialDecoder.isUsable))
    func everyRingSizeHoldsItsBound() throws {
        let loops = 150_000
        let sizes = [
            1, 4096, 8192, (8 << 10) + 1, 20_000, 64 << 10, 128 << 10, 192 << 10, 256 << 10, 320 << 10, (1 << 20) + 3,
        ]
        for size in sizes {
            let path = temporaryTracePath("ring-\(size)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            var configuration = TraceConfiguration()
            configuration.processSamplingInterval = .zero
            configuration.whenBufferFull = .overwriteOldest
            configuration.bufferSizePerThread = size
            let (chunk, chunks) = SessionWriter.ring(for: size)
            let ring = chunk * chunks
            let session = try TraceSession.start(configuration)
            let before = ProcessMemory.residentBytes()
            // Run the loop on a fresh thread, so that no chunk this thread
            // kept from an earlier session counts.
            let done = DispatchSemaphore(value: 0)
            Thread {
                for index in 0..<loops {
                    Trace.begin("outer")
                    Trace.begin("inner")
                    Trace.counter("index", index)
                    Trace.end()
                    Trace.end()
                }
                done.signal()
            }.start()
            done.wait()
            let grown = ProcessMemory.residentBytes() - before
            try session.dump(to: path)
            try session.stop()
            let statistics = session.statistics
            let dumpBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(statistics.recordedEvents == UInt64(loops * 5), "\(size)")
            #expect(statistics.discardedEvents == 0, "\(size): a ring overwrites, it never discards")
            #expect(statistics.overwrittenEvents > 0, "\(size)")
            // Records take more room than their packets, so the dump, with
            // its descriptors, interning and statistics, stays within the
            // ring plus one chunk.
            #expect(dumpBytes <= ring + chunk, "\(size): a \(ring)-byte ring dumped \(dumpBytes) bytes")
            #expect(
                ProcessMemory.isThreadSanitized || grown < ring + (8 << 20),
                "\(size): resident memory grew \(grown) bytes for a \(ring)-byte ring")

            print(
                "RingBoundTests: bufferSizePerThread \(size): ring \(ring) bytes, dump \(dumpBytes) bytes, resident "
                    + "+\(grown) bytes"
            )
            let trace = try OfficialDecoder.decode(path)
            #expect(trace.errors.isEmpty, "\(size): \(trace.errors.prefix(3))")
            let values = trace.counters.filter { $0.name == "index" }.map { Int($0.value) }.sorted()
            #expect(values.last == loops - 1, "\(size): the newest event survives")
            if let first = values.first {
                #expect(
                    values == Array(first...(loops - 1)), "\(size): the ring holds an unbroken run of the newest events"
                )
            }
            // Every interval that begins in the ring ends in it.
            let open = trace.slices.filter { $0.dur == nil }
            #expect(open.isEmpty, "\(size): \(open.count) intervals lost their end")
            #expect(trace.slices(named: "inner").count >= values.count - 1)
        }
    }
}
