import CStrobeCounting
import Foundation
import Strobe
import StrobePerf
import StrobeResults
import StrobeTestSupport
import StrobeTestTraits
import Synchronization
import Testing

/// The measure block's exact counts: allocations, their bytes, the ones
/// left live, retains and releases, nothing counted from setup. Counting is
/// process-wide, so the suite runs one test at a time.
@Suite(.serialized, .processWide)
struct ExactCountTests {
    static func runner(iterations: Int = 4) -> PerfRunner {
        var options = PerfRunner.Options()
        options.stopRule = .iterations(iterations)
        options.warmupIterations = 1
        return PerfRunner(options: options)
    }

    /// Blocks the measure blocks keep on purpose (by address), freed by the
    /// test.
    final class Kept: Sendable {
        let addresses = Mutex<[UInt]>([])

        init() {
            addresses.withLock { $0.reserveCapacity(1024) }
        }

        func keep(_ block: UnsafeMutableRawPointer) {
            let address = UInt(bitPattern: block)
            addresses.withLock { $0.append(address) }
        }

        func freeAll() {
            addresses.withLock { addresses in
                for address in addresses { UnsafeMutableRawPointer(bitPattern: address)?.deallocate() }
                addresses.removeAll(keepingCapacity: true)
            }
        }
    }

    /// A class instance to retain.
    final class Target: Sendable {}

    @inline(never)
    static func allocateAndFree(_ count: Int, bytes: Int) {
        for _ in 0..<count {
            let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 8)
            block.storeBytes(of: 7, as: Int.self)
            block.deallocate()
        }
    }

    typealias RuntimeRetain = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer
    typealias RuntimeRelease = @convention(c) (UnsafeMutableRawPointer) -> Void

    /// The program's `swift_retain` and `swift_release`, called by address:
    /// one call is one retain (Swift code built without optimization
    /// copies and retains a reference around each `Unmanaged` call).
    static let runtimeRetain = unsafeBitCast(dlsym(nil, "swift_retain"), to: RuntimeRetain.self)
    static let runtimeRelease = unsafeBitCast(dlsym(nil, "swift_release"), to: RuntimeRelease.self)

    /// `count` retains of `target`, then `count` releases.
    static func retainAndRelease(_ target: Target, _ count: Int) {
        let object = Unmanaged.passUnretained(target).toOpaque()
        for _ in 0..<count { _ = runtimeRetain(object) }
        for _ in 0..<count { runtimeRelease(object) }
    }

    static func samples(_ result: PerfTestResult, _ name: String) throws -> [Double] {
        try #require(result.metric(name), "no metric \(name)").samples
    }

    @Test func countsTheAllocationsOfTheMeasureBlockExactly() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        let test = PerfTest("seven allocations") { _ in Self.allocateAndFree(7, bytes: 48) }
        let result = await Self.runner().run(test)
        #expect(result.error == nil)
        #expect(try Self.samples(result, "allocations") == [7, 7, 7, 7])
        #expect(try Self.samples(result, "allocations.bytes") == [336, 336, 336, 336])
        #expect(try Self.samples(result, "allocations.remaining") == [0, 0, 0, 0])
        let metric = try #require(result.metric("allocations"))
        #expect(metric.better == .lower)
        #expect(metric.unit == "count")
    }

    @Test func setupAndTeardownAreNotCounted() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        let test = PerfTest(
            "heavy setup", setup: { Self.allocateAndFree(500, bytes: 64) },
            measure: { _ in Self.allocateAndFree(3, bytes: 16) },
            teardown: { Self.allocateAndFree(200, bytes: 64) })
        let result = await Self.runner().run(test)
        #expect(try Self.samples(result, "allocations") == [3, 3, 3, 3])
        #expect(try Self.samples(result, "allocations.bytes") == [48, 48, 48, 48])
    }

    @Test func anAllocationKeptPerIterationShowsAsRemaining() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        let kept = Kept()
        defer { kept.freeAll() }
        let test = PerfTest("leaks two") { _ in
            Self.allocateAndFree(4, bytes: 8)
            kept.keep(UnsafeMutableRawPointer.allocate(byteCount: 24, alignment: 8))
            kept.keep(UnsafeMutableRawPointer.allocate(byteCount: 24, alignment: 8))
        }
        let result = await Self.runner().run(test)
        #expect(try Self.samples(result, "allocations") == [6, 6, 6, 6])
        #expect(try Self.samples(result, "allocations.remaining") == [2, 2, 2, 2])
        #expect(try Self.samples(result, "allocations.bytes") == [80, 80, 80, 80])
    }

    @Test func allocationsOfAThreadTheBlockStartsAreCounted() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        let inline = await Self.runner().run(PerfTest("inline") { _ in Self.allocateAndFree(1, bytes: 8) })
        let threaded = await Self.runner().run(
            PerfTest("on a thread") { _ in
                let done = DispatchSemaphore(value: 0)
                let thread = Thread {
                    Self.allocateAndFree(1_000, bytes: 8)
                    done.signal()
                }
                thread.start()
                done.wait()
            })
        let alone = try Self.samples(inline, "allocations")
        let spawned = try Self.samples(threaded, "allocations")
        #expect(alone == [1, 1, 1, 1])
        #expect(spawned.allSatisfy { $0 >= 1_000 }, "\(spawned)")
    }

    /// A thread's first record into the iteration's session (its joining
    /// the session, and with a CPU profile its sampler) is Strobe's own
    /// work: the count is the block's three allocations, profiled or not.
    @Test(arguments: [false, true])
    func aThreadJoiningTheSessionIsNotCounted(profiled: Bool) async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        var runner = Self.runner()
        if profiled { runner.options.cpuProfile = TraceConfiguration.CPUProfile(frequency: 999) }
        let test = PerfTest("records, then allocates") { _ in
            Trace.instant("first record of this session")
            Self.allocateAndFree(3, bytes: 16)
        }
        let result = await runner.run(test)
        #expect(result.error == nil)
        #expect(try Self.samples(result, "allocations") == [3, 3, 3, 3])
    }

    @Test func countsRetainsAndReleasesAsADifferenceOfExactly() async throws {
        guard ExactCounts.Selection.available.retains else { return }
        let target = Target()
        let few = await Self.runner().run(PerfTest("three retains") { _ in Self.retainAndRelease(target, 3) })
        let many = await Self.runner().run(PerfTest("ten retains") { _ in Self.retainAndRelease(target, 10) })
        let fewRetains = try Self.samples(few, "retains")
        let manyRetains = try Self.samples(many, "retains")
        let fewReleases = try Self.samples(few, "releases")
        let manyReleases = try Self.samples(many, "releases")
        // Every iteration counts the same, and the block's own seven
        // retains and releases are the whole difference.
        #expect(Set(fewRetains).count == 1, "\(fewRetains)")
        #expect(Set(manyRetains).count == 1, "\(manyRetains)")
        #expect(zip(manyRetains, fewRetains).allSatisfy { $0 - $1 == 7 }, "\(manyRetains) vs \(fewRetains)")
        #expect(zip(manyReleases, fewReleases).allSatisfy { $0 - $1 == 7 }, "\(manyReleases) vs \(fewReleases)")
        #expect(fewRetains.allSatisfy { $0 >= 3 })
    }

    @Test func countsCanBeSwitchedOff() async throws {
        var options = PerfRunner.Options()
        options.stopRule = .iterations(2)
        options.countAllocations = false
        options.countRetains = false
        let result = await PerfRunner(options: options).run(
            PerfTest("uncounted") { _ in Self.allocateAndFree(2, bytes: 8) })
        for name in ExactCounts.metricNames { #expect(result.metric(name) == nil, "\(name)") }
        #expect(result.metric("wall") != nil)
    }

    @Test func aProgramOfTheSDKAloneKeepsTheLibraryMalloc() throws {
        // This process links StrobePerf and counts; TraceChild links only
        // Strobe and defines neither malloc nor swift_retain.
        let available = ExactCounts.Selection.available
        #expect(available.allocations && available.retains)
        let symbols = try runProgram("/usr/bin/nm", ["-D", "--defined-only", builtProgram("TraceChild")])
        #expect(symbols.status == 0, "\(symbols.errors)")
        let defined = Set(symbols.output.split(separator: "\n").compactMap { $0.split(separator: " ").last })
        #expect(!defined.isEmpty)
        for name in ["malloc", "free", "calloc", "realloc", "swift_retain", "swift_release"] {
            #expect(!defined.contains(Substring(name)), "TraceChild defines \(name)")
        }
    }

    /// The runtime sizes an array's capacity by malloc_usable_size right
    /// after allocating it; glibc's answer depends on the heap (a chunk 16
    /// bytes too large is handed out whole, a large block may be mapped).
    /// The counting program answers for its newest block as for an exact
    /// fit, so capacities, and the allocations of growing arrays, repeat.
    @Test func theNewestBlocksUsableSizeIsThatOfAnExactFit() throws {
        guard ExactCounts.Selection.available.allocations else { return }
        // The definition every caller in the process binds to, as the
        // runtime finds it (RTLD_DEFAULT).
        let symbol = try #require(dlsym(nil, "malloc_usable_size"))
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
        let large = try #require(malloc(200_000))
        // 200,000 and the 8-byte header, rounded up to 16, less the header;
        // glibc maps such a block and would say 200,688.
        #expect(usableSize(large) == 200_008)
        let small = try #require(malloc(100))
        #expect(usableSize(small) == 104)
        // No longer the newest: glibc's own answer, at least the request.
        #expect(usableSize(large) >= 200_000)
        free(small)
        free(large)
        #expect(usableSize(nil) == 0)
    }

    @Test func anAsyncBlockIsCountedAcrossItsAwaits() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        let test = PerfTest(
            "async",
            measureAsync: { _ in
                Self.allocateAndFree(5, bytes: 8)
                await Task.yield()
                Self.allocateAndFree(5, bytes: 8)
            })
        let result = await Self.runner().run(test)
        #expect(try Self.samples(result, "allocations").allSatisfy { $0 >= 10 })
    }

    /// A helper thread that signals the block's end and then does a little
    /// more: 2 ms of work and five allocations, which land after the block
    /// has returned. The window waits for the helper to go back to sleep,
    /// so every iteration counts them.
    final class LateHelper: Sendable {
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let stopping = Atomic<Bool>(false)

        init() {
            Thread { [self] in
                while true {
                    go.wait()
                    if stopping.load(ordering: .acquiring) { return }
                    ExactCountTests.allocateAndFree(10, bytes: 32)
                    done.signal()
                    let start = DispatchTime.now().uptimeNanoseconds
                    while DispatchTime.now().uptimeNanoseconds - start < 2_000_000 {}
                    ExactCountTests.allocateAndFree(5, bytes: 32)
                }
            }.start()
        }

        func stop() {
            stopping.store(true, ordering: .releasing)
            go.signal()
        }
    }

    @Test func aHelpersWorkAfterItsSignalIsCountedEveryIteration() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        let helper = LateHelper()
        defer { helper.stop() }
        let test = PerfTest("a helper's tail") { _ in
            helper.go.signal()
            helper.done.wait()
        }
        let result = await Self.runner(iterations: 20).run(test)
        #expect(result.error == nil)
        #expect(try Self.samples(result, "allocations") == Array(repeating: 15, count: 20))
    }

    /// Work handed to libdispatch's worker threads and to a task group's
    /// child tasks: libdispatch refills a thread's cache of continuations
    /// from the heap when the scheduling has emptied it, which no window
    /// counts, so every iteration counts the same (3 or 4 allocations of one
    /// `concurrentPerform` before, 18 to 26 of one task group).
    @Test func workOnDispatchAndTaskGroupsCountsTheSameEveryIteration() async throws {
        guard ExactCounts.Selection.available.allocations else { return }
        #expect(cstrobe_counting_leave_out_runtime_caches() > 0, "libdispatch's continuation cache was not found")
        let parallel = PerfTest("concurrentPerform") { _ in
            DispatchQueue.concurrentPerform(iterations: 8) { _ in Self.allocateAndFree(2, bytes: 24) }
        }
        let tasks = PerfTest(
            "task group",
            measureAsync: { _ in
                let sum = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<4 {
                        group.addTask {
                            Self.allocateAndFree(2, bytes: 24)
                            return index
                        }
                    }
                    return await group.reduce(0, +)
                }
                #expect(sum == 6)
            })
        // Each test's own allocations: two in each of its work items.
        for (test, own) in [(parallel, 16.0), (tasks, 8.0)] {
            let result = await Self.runner(iterations: 200).run(test)
            #expect(result.error == nil)
            let allocations = try Self.samples(result, "allocations")
            let seen = Dictionary(grouping: allocations) { $0 }.mapValues(\.count)
            #expect(seen.count == 1, "\(test.name): iterations per count \(seen)")
            #expect(allocations.allSatisfy { $0 >= own }, "\(test.name): \(seen)")
        }
    }

    /// A thread that waits on `IdleExit.go`, started outside the window with
    /// thread-specific data whose destructor frees it and allocates and
    /// frees three blocks more, then posts `IdleExit.done`: an idle pool
    /// worker whose timeout falls.
    enum IdleExit {
        nonisolated(unsafe) static var go = sem_t()
        nonisolated(unsafe) static var done = sem_t()
        nonisolated(unsafe) static var key = pthread_key_t()

        static func start() -> pthread_t {
            sem_init(&go, 0, 0)
            sem_init(&done, 0, 0)
            pthread_key_create(&key) { data in
                free(data)
                for _ in 0..<3 { free(malloc(48)) }
                sem_post(&IdleExit.done)
            }
            var thread = pthread_t()
            pthread_create(
                &thread, nil,
                { _ in
                    pthread_setspecific(IdleExit.key, malloc(64))
                    while sem_wait(&IdleExit.go) != 0 {}
                    return nil
                }, nil)
            return thread
        }
    }

    /// A thread that exits inside the window without having counted in it
    /// is not counted (its destructors free what it kept, whenever its
    /// timeout falls); the block's own allocations are, and so is the exit
    /// of a thread that worked in the window (the thread the block starts,
    /// in `allocationsOfAThreadTheBlockStartsAreCounted`).
    @Test func anIdleThreadExitingInTheWindowIsNotCounted() {
        guard ExactCounts.Selection.available.allocations else { return }
        let idle = IdleExit.start()
        // Its data is set before the window opens.
        usleep(20_000)
        cstrobe_counting_begin(1, 0)
        Self.allocateAndFree(2, bytes: 16)
        sem_post(&IdleExit.go)
        while sem_wait(&IdleExit.done) != 0 {}
        let counts = cstrobe_counting_end()
        // Joined outside the window: joining frees the thread's own memory.
        pthread_join(idle, nil)
        #expect(counts.allocations == 2)
        #expect(counts.frees == 2)
    }

    /// A thread that has never allocated, which allocates and frees one
    /// block inside the window when `FirstAllocation.go` is posted.
    enum FirstAllocation {
        nonisolated(unsafe) static var go = sem_t()
        nonisolated(unsafe) static var done = sem_t()
        nonisolated(unsafe) static var leave = sem_t()

        static func start() -> pthread_t {
            sem_init(&go, 0, 0)
            sem_init(&done, 0, 0)
            sem_init(&leave, 0, 0)
            var thread = pthread_t()
            pthread_create(
                &thread, nil,
                { _ in
                    while sem_wait(&FirstAllocation.go) != 0 {}
                    free(malloc(24))
                    sem_post(&FirstAllocation.done)
                    while sem_wait(&FirstAllocation.leave) != 0 {}
                    return nil
                }, nil)
            return thread
        }
    }

    /// A thread's first allocation registers the mark of its exit
    /// (ThreadExit.c), which allocates; inside a window that is Strobe's own
    /// work, and the entry's free at the thread's exit too: a thread started
    /// by a test counts only what it allocates (ProfileSuite's two-thread
    /// test counted 17 allocations where it makes 15).
    @Test func aThreadsFirstAllocationCountsOnlyItself() {
        guard ExactCounts.Selection.available.allocations else { return }
        let thread = FirstAllocation.start()
        usleep(20_000)
        cstrobe_counting_begin(1, 0)
        sem_post(&FirstAllocation.go)
        while sem_wait(&FirstAllocation.done) != 0 {}
        // The thread's exit inside the window: the window waits for it.
        sem_post(&FirstAllocation.leave)
        _ = cstrobe_counting_settle(ExactCounts.settleLimitNanoseconds)
        let counts = cstrobe_counting_end()
        // Joined outside the window: joining frees the thread's own memory.
        pthread_join(thread, nil)
        #expect(counts.allocations == 1)
        #expect(counts.frees == 1)
    }

    @Test func aSingleThreadedBlockIsClosedWithoutWaiting() {
        guard ExactCounts.Selection.available.allocations else { return }
        cstrobe_counting_begin(1, 0)
        Self.allocateAndFree(3, bytes: 16)
        let waited = cstrobe_counting_settle(ExactCounts.settleLimitNanoseconds)
        let counts = cstrobe_counting_end()
        #expect(waited == 0)
        #expect(counts.allocations == 3)
    }
}
