import StrobeResults
import Testing

@testable import StrobePerf

/// Callgrind's dump format read into instructions per function: own and
/// inclusive counts, calls, compressed names, recursion, and errors that
/// name the line.
struct CallgrindDumpTests {
    /// A dump as callgrind writes it with `--compress-strings=yes`: main
    /// calls work twice (inclusive 700 in all) and a C function once; work
    /// calls itself once (a recursion, whose cost is already its own) and
    /// leaf.
    static let compressed = """
        # callgrind format
        version: 1
        creator: callgrind-3.19.0
        pid: 4242
        cmd:  ./Suite --iterations=3
        part: 1

        desc: I1 cache:
        positions: line
        events: Ir
        summary: 1000

        ob=(1) /work/Suite
        fl=(1) ???
        fn=(1) main
        0 100
        cfn=(2) $s5Suite4workyyF
        calls=2 0
        0 700
        cob=(2) /lib/libm.so.6
        cfn=(3) sin
        calls=1 0
        0 200

        fn=(2)
        0 500
        cfn=(2)
        calls=1 0
        0 120
        cfn=(4) leaf'2
        calls=3 0
        0 200

        fn=(4)
        0 200

        fn=(3)
        0 200

        totals: 1000
        """

    @Test func ownAndInclusiveInstructionsPerFunction() throws {
        let dump = try CallgrindDump(parsing: Self.compressed, source: "dump")
        let counts = dump.profile.countPerIteration
        #expect(dump.total == 1000)
        #expect(counts["main"]?.exclusive == 100)
        #expect(counts["main"]?.inclusive == 1000)
        // The recursive call's 120 are already work's own.
        #expect(counts["Suite.work()"]?.exclusive == 500)
        #expect(counts["Suite.work()"]?.inclusive == 700)
        // `leaf'2` (a context copy) is `leaf`.
        #expect(counts["leaf"]?.inclusive == 200)
        #expect(counts["sin"]?.inclusive == 200)
        #expect(dump.profile.callees["main"] == ["Suite.work()", "leaf", "sin"])
        #expect(dump.profile.callees["Suite.work()"] == ["leaf"])
    }

    @Test func uncompressedNamesAndMissingCountsRead() throws {
        let text = """
            events: Ir Dr
            fn=main
            0 40 7
            cfn=helper
            calls=1 0
            0 60
            fn=helper
            0 60
            0
            totals: 100 7
            """
        let dump = try CallgrindDump(parsing: text, source: "plain")
        #expect(dump.total == 100)
        #expect(dump.profile.countPerIteration["main"]?.inclusive == 100)
        #expect(dump.profile.countPerIteration["helper"]?.exclusive == 60)
    }

    @Test func anAddressWithoutASymbolIsNamedSo() {
        #expect(CallgrindDump.readableName("0x00000000004011a0") == "(no symbol)")
        #expect(CallgrindDump.readableName("memcpy") == "memcpy")
    }

    @Test func badDumpsAreRefusedNamingTheLine() {
        #expect(throws: CallgrindDumpError.self) { try CallgrindDump(parsing: "fn=main\n0 5\n", source: "d") }
        do {
            _ = try CallgrindDump(parsing: "events: Ir\nfn=main\n0 five\n", source: "dump.3")
            Issue.record("a count that is not a number was read")
        } catch {
            #expect(error.description == "dump.3:3: not a count: five")
        }
        #expect(throws: CallgrindDumpError.self) { try CallgrindDump(parsing: "events: Dr\n", source: "d") }
        #expect(throws: CallgrindDumpError.self) { try CallgrindDump(parsing: "events: Ir\n0 5\n", source: "d") }
    }

    @Test func profilesOfIterationsMergeByName() throws {
        var first = try CallgrindDump(parsing: Self.compressed, source: "a").profile
        let second = try CallgrindDump(parsing: Self.compressed, source: "b").profile
        first.merge(second)
        #expect(first.iterations == 2)
        #expect(first.total == 2000)
        #expect(first.countPerIteration["Suite.work()"]?.inclusive == 700)
        #expect(first.functions.count == 4)
    }
}
