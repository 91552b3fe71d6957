// Five CPU-bound tests of about 20 ms each. NIGHTLY_LONGER_LOOPS=1 makes
// `checksum` and `sieve` run 10% more iterations of their loops (a real
// change of the work done, not a sleep); NIGHTLY_CHECKSUM_PERCENT=2 makes
// `checksum` alone run 2% more (51 rounds instead of 50); the other tests
// read neither. NIGHTLY_WAITING=1 adds a sixth test, `handoff`, that waits:
// 10 ms of the checksum loop, then a 10 ms sleep (a hand-off to another
// thread); NIGHTLY_WAIT_PERCENT=20 makes its sleep 20% longer, its work
// the same.
//
//   swift run -c release --package-path Examples/NightlySuite NightlyPerf --iterations 5

import Foundation
import StrobePerf

/// 1.1 when NIGHTLY_LONGER_LOOPS=1, else 1.
let longer = ProcessInfo.processInfo.environment["NIGHTLY_LONGER_LOOPS"] == "1" ? 1.1 : 1.0
/// `checksum`'s own extra work, NIGHTLY_CHECKSUM_PERCENT percent (0 unset).
let checksumExtra = 1 + (Double(ProcessInfo.processInfo.environment["NIGHTLY_CHECKSUM_PERCENT"] ?? "") ?? 0) / 100

/// Keeps a result alive so that the optimizer cannot drop the loop.
@inline(never) func keep<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// FNV-1a over 64 KiB, `rounds` times.
func checksum(rounds: Int) -> UInt64 {
    let bytes = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for _ in 0..<rounds {
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
    }
    return hash
}

/// The primes below `limit`, counted with the sieve of Eratosthenes, `rounds` times.
func sieve(limit: Int, rounds: Int) -> Int {
    var count = 0
    for _ in 0..<rounds {
        var composite = [Bool](repeating: false, count: limit)
        var index = 2
        while index * index < limit {
            if !composite[index] {
                var multiple = index * index
                while multiple < limit {
                    composite[multiple] = true
                    multiple += index
                }
            }
            index += 1
        }
        count = composite[2...].filter { !$0 }.count
    }
    return count
}

/// Sorts `count` pseudo-random integers.
func sortNumbers(count: Int) -> Int {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var numbers = (0..<count).map { _ -> UInt64 in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 17
    }
    numbers.sort()
    return Int(truncatingIfNeeded: numbers[count / 2])
}

/// Multiplies two `size`×`size` matrices.
func multiply(size: Int) -> Double {
    let a = (0..<size * size).map { Double($0 % 17) / 7 }
    let b = (0..<size * size).map { Double($0 % 13) / 5 }
    var c = [Double](repeating: 0, count: size * size)
    for i in 0..<size {
        for k in 0..<size {
            let scale = a[i * size + k]
            for j in 0..<size {
                c[i * size + j] += scale * b[k * size + j]
            }
        }
    }
    return c[size * size / 2]
}

/// Parses `count` decimal numbers out of one string.
func parseNumbers(count: Int) -> Int {
    let text = (0..<count).map { String($0 &* 7919 % 1_000_003) }.joined(separator: ",")
    return text.split(separator: ",").reduce(0) { $0 &+ (Int($1) ?? 0) }
}

/// `handoff`'s sleep in microseconds: 10 ms, NIGHTLY_WAIT_PERCENT% longer.
let handoffSleep = UInt32(
    10_000 * (1 + (Double(ProcessInfo.processInfo.environment["NIGHTLY_WAIT_PERCENT"] ?? "") ?? 0) / 100))

let waiting = ProcessInfo.processInfo.environment["NIGHTLY_WAITING"] == "1"

let tests = [
    PerfTest("checksum") { _ in keep(checksum(rounds: Int((50 * longer * checksumExtra).rounded()))) },
    PerfTest("sieve") { _ in keep(sieve(limit: 400_000, rounds: Int((10 * longer).rounded()))) },
    PerfTest("sort") { _ in keep(sortNumbers(count: 300_000)) },
    PerfTest("matrix") { _ in keep(multiply(size: 160)) },
    PerfTest("parse") { _ in keep(parseNumbers(count: 150_000)) },
]
let handoff = PerfTest("handoff") { _ in
    keep(checksum(rounds: 25))
    usleep(handoffSleep)
}

await PerfSuite("NightlySuite", tests: tests + (waiting ? [handoff] : [])).main()
