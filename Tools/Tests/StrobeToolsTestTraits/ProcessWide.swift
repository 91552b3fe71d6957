import Testing

/// A suite trait for the tools' suites that use state of the whole process:
/// each suite that carries it runs alone, never at the same time as another
/// suite that carries it.
///
/// The trace session is one per process, and every test target of the
/// package runs in one process, so two suites recording traces at once
/// would record into each other's files. `.serialized` orders the tests
/// inside one suite; this orders the suites, so that `swift test` needs no
/// `--no-parallel`. A suite nested in one that carries the trait runs
/// inside its parent's turn and must not carry it again (the turn is not
/// reentrant).
package struct ProcessWideTrait: SuiteTrait, TestScoping {
    /// Runs the whole suite while it holds the process-wide turn.
    package func provideScope(
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
    package static var processWide: Self { ProcessWideTrait() }
}

/// The turn the suites marked ``ProcessWideTrait`` take one after another:
/// a lock whose waiters suspend instead of blocking their threads.
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
            // The turn passes straight to the next waiter.
            waiting.removeFirst().resume()
        }
    }
}
