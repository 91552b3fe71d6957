import Testing

/// A suite trait for the suites of both packages that use state of the whole
/// process: each suite that carries it runs alone, never at the same time as
/// another suite that carries it (the tools' tests reach it through the
/// package `strobe-test-support`, in `Tests/Support`).
///
/// The trace session, crash capture's signal handlers, the exact counts of
/// a measure block and the process's resource usage belong to the whole
/// process, and every test target of a package runs in one process, so two
/// such suites running at once would record into each other's traces and
/// counts. `.serialized` orders the tests inside one suite; this orders the
/// suites, so that `swift test` needs no `--no-parallel`. A suite nested in
/// one that carries the trait runs inside its parent's turn and must not
/// carry it again (the lock is not reentrant).
public struct ProcessWideTrait: SuiteTrait, TestScoping {
    /// Runs the whole suite while it holds the process-wide turn.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await ProcessWideTurn.shared.acquire()
        do {
            try await function()
        } catch {
            await ProcessWideTurn.shared.release()
            throw error
        }
        await ProcessWideTurn.shared.release()
    }
}

extension Trait where Self == ProcessWideTrait {
    /// The suite uses state of the whole process and runs apart from every
    /// other suite that says so; see ``ProcessWideTrait``.
    public static var processWide: Self { ProcessWideTrait() }
}

/// The one turn the suites marked ``ProcessWideTrait`` take in order: a
/// lock that suspends its waiters instead of blocking their threads.
actor ProcessWideTurn {
    static let shared = ProcessWideTurn()

    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            held = false
        } else {
            // The turn passes to the next waiter without being let go.
            waiting.removeFirst().resume()
        }
    }
}
