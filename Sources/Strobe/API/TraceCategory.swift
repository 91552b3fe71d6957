import CStrobe
internal import StrobeCategoryPattern
import StrobeEncoding
import Synchronization

extension Trace {
    /// A group of events that a session records or skips as one, chosen by
    /// name or pattern when the session starts and changeable while it runs.
    ///
    /// Declare categories once, as static constants, and pass them to the
    /// calls that record:
    ///
    /// ```swift
    /// extension Trace.Category {
    ///     static let media = Trace.Category("media")
    ///     static let network = Trace.Category("net.http")
    /// }
    ///
    /// Trace.interval("decode", category: .media) { decode() }
    /// Trace.instant("retry", category: .network)
    /// ```
    ///
    /// An event in a category the session does not record costs one load and
    /// a branch, as an event with no session does. Events without a category
    /// are always recorded. See ``TraceConfiguration/categories`` for the
    /// patterns that choose categories.
    ///
    /// A process may name up to 1,023 categories; names past that share one
    /// slot: their events record whenever a session runs, without a
    /// category.
    public struct Category: Sendable, Hashable, CustomStringConvertible {
        /// The category's slot in the table of run-time states.
        @usableFromInline
        let index: UInt32

        /// The category named `name`; the same name always gives the same
        /// category.
        public init(_ name: String) {
            index = CategoryRegistry.shared.index(of: name)
        }

        /// The category's name.
        public var name: String { CategoryRegistry.shared.name(of: index) }

        /// The category's name.
        public var description: String { name }

        /// Whether the running session records this category; false with no
        /// session.
        @inlinable
        public var isEnabled: Bool { cstrobe_category_generation(index) != 0 }

        /// The record word that announces the category of the next record.
        @inlinable @inline(__always)
        var recordWord: UInt64 { RecordLayout.categoryWord(index) }
    }
}

/// The process-wide table of category names and the patterns of the running
/// session, which decide each category's state.
package final class CategoryRegistry: Sendable {
    package static let shared = CategoryRegistry()

    private struct State {
        var indices: [String: UInt32] = [:]
        /// Names by index; index 0 is shared by names past the limit.
        var names: [String] = [""]
        var overflowNames: [String: Int] = [:]
        var generation: UInt64 = 0
        var selection = CategorySelection(patterns: [])
    }

    private let state = SanitizedMutex(State())

    /// Categories past this many share slot 0, which records whenever a
    /// session runs.
    static let limit = Int(CSTROBE_CATEGORY_LIMIT)

    package func index(of name: String) -> UInt32 {
        state.withLock { state in
            if let index = state.indices[name] { return index }
            guard state.names.count < Self.limit else {
                state.overflowNames[name, default: 0] += 1
                return 0
            }
            let index = UInt32(state.names.count)
            state.names.append(name)
            state.indices[name] = index
            // A permanent copy, whose text a crash handler can write.
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(name.utf8.count, 1))
            _ = copy.initialize(from: name.utf8)
            cstrobe_crash_note_category(UInt64(index), copy.baseAddress, UInt64(name.utf8.count))
            if state.generation != 0, state.selection.enables(name) {
                cstrobe_set_category_generation(index, state.generation)
            }
            return index
        }
    }

    func name(of index: UInt32) -> String {
        state.withLock { Int(index) < $0.names.count ? $0.names[Int(index)] : "" }
    }

    /// The names of all categories, by index (index 0 is empty).
    func names() -> [String] { state.withLock { $0.names } }

    /// Starts recording for session `generation` the categories `selection`
    /// enables; slot 0 always records.
    func activate(generation: UInt64, selection: CategorySelection) {
        state.withLock { state in
            state.generation = generation
            state.selection = selection
            apply(&state)
        }
    }

    /// Changes the categories the running session records.
    func select(_ selection: CategorySelection, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            state.selection = selection
            apply(&state)
        }
    }

    /// Stops recording every category.
    func deactivate() {
        state.withLock { state in
            state.generation = 0
            apply(&state)
        }
    }

    private func apply(_ state: inout State) {
        cstrobe_set_category_generation(0, state.generation)
        for index in 1..<state.names.count {
            let on = state.generation != 0 && state.selection.enables(state.names[index])
            cstrobe_set_category_generation(UInt32(index), on ? state.generation : 0)
        }
    }
}

/// Which categories a session records: the patterns of
/// ``TraceConfiguration/categories``, matched once per category when the
/// session starts or changes them, never while an event is recorded.
struct CategorySelection: Sendable, Hashable {
    private let patterns: CategoryPatterns

    init(patterns: [String]) {
        self.patterns = CategoryPatterns(patterns: patterns)
    }

    /// Why `patterns` cannot select categories, or nil when they can.
    static func problem(with patterns: [String]) -> String? {
        CategoryPatterns.problem(with: patterns)
    }

    func enables(_ name: String) -> Bool { patterns.enables(name) }

    /// Whether `name` matches the glob `pattern`.
    static func matches(_ name: String, _ pattern: String) -> Bool {
        CategoryPatterns.matches(name, pattern)
    }
}
