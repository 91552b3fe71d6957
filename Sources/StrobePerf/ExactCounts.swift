import CStrobeCounting
import Strobe
import StrobeResults

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a measure block did, counted exactly: heap allocations, their bytes,
/// the allocations still live at its end, and Swift retains and releases.
///
/// A counting window is open from just before the measure block is called
/// until just after it returns, and counts on every thread of the process
/// (threads the block starts, and the tasks an asynchronous block awaits,
/// included) except while a thread does Strobe's own work: the trace
/// session's writer all along, and on the test's threads the SDK's
/// bookkeeping (a thread's first record, its joining the iteration's
/// session, a chunk taken), whose amount follows the scheduling (which
/// threads record first, how soon the writer recycles chunks) rather than
/// the test's code. Setup, teardown, the session's start and stop and the
/// reading of the trace are outside it. The window is process-wide, not
/// per thread, so that work the block hands to another thread is not lost;
/// each thread adds to a record of its own (no locked instruction), and the
/// records are summed when the window closes. The price is that work of an
/// unrelated thread during the block is counted too. The window closes
/// once the other threads that counted in it are asleep (after at most
/// 10 ms of their CPU time, 200 ms by the clock), so that a helper's work
/// after its signal is always inside, on a loaded machine too.
///
/// The counts become the iteration's metrics, all `better: .lower`:
/// - `allocations`: calls of malloc, calloc, realloc, memalign,
///   aligned_alloc, posix_memalign, valloc and pvalloc, but for those
///   libdispatch makes to refill a thread's cache of continuations, whose
///   number follows which thread ran which work item before (a queue, group
///   or block the code makes through libdispatch still counts);
/// - `allocations.bytes`: the bytes those calls asked for;
/// - `allocations.remaining`: allocations less frees in the block (but
///   for libdispatch's freeing of an exiting thread's cache, and anything
///   a thread that exits without having counted in the window does); an
///   allocation the block keeps (a leak) shows as a steady count per
///   iteration, and a block that frees what came before it can go below 0;
/// - `retains`, `releases`: Swift's `swift_retain` and `swift_release`
///   (`swift_retain_n` and `swift_release_n` counting `n`).
package enum ExactCounts {
    /// Which counts a runner takes.
    package struct Selection: Sendable, Hashable {
        /// Heap allocations, their bytes and the remaining ones.
        package var allocations: Bool
        /// Swift retains and releases.
        package var retains: Bool

        /// The counts this process can take: allocations where glibc's
        /// allocator is wrapped, retains where the Swift runtime has its
        /// hooks.
        package static var available: Selection {
            Selection(
                allocations: cstrobe_counting_allocations_available() != 0,
                retains: cstrobe_counting_retains_available() != 0)
        }

        /// No counts.
        package static let none = Selection(allocations: false, retains: false)

        /// Whether it takes any count.
        package var isEmpty: Bool { !allocations && !retains }

        /// The counts of both selections.
        package func intersection(_ other: Selection) -> Selection {
            Selection(allocations: allocations && other.allocations, retains: retains && other.retains)
        }
    }

    /// The names of the count metrics, in the order they are reported
    /// (``MetricKind/exactCountNames``).
    package static var metricNames: [String] { MetricKind.exactCountNames }

    /// Finds the code of the runtime's own caches, whose allocator calls no
    /// window counts (`cstrobe_counting_leave_out_runtime_caches`): call
    /// before the first window, outside any instruction window (it reads a
    /// library's symbol table once per process).
    package static func leaveOutRuntimeCaches() {
        _ = cstrobe_counting_leave_out_runtime_caches()
    }

    /// Opens the counting window, leaving Strobe's own work out.
    package static func begin(_ selection: Selection) {
        guard !selection.isEmpty else { return }
        cstrobe_counting_begin(1, selection.retains ? 1 : 0)
    }

    /// Closes the window and gives its counts as metrics of one sample.
    package static func end(_ selection: Selection) -> [PerfMetric] {
        stop(selection).map { metrics($0, selection) } ?? []
    }

    /// How much CPU time the other threads that counted in a window may
    /// spend running while its end waits for them to go to sleep
    /// (``stop(_:)``): 10 ms, and at most 200 ms by the clock.
    package static let settleLimitNanoseconds: UInt64 = 10_000_000

    /// Closes the window and gives its raw counts (nil when nothing was
    /// counted), for ``metrics(_:_:)`` to turn into metrics once other
    /// windows around it have closed.
    ///
    /// When another thread counted in the window, it closes only once every
    /// such thread is asleep or gone (at most ``settleLimitNanoseconds`` of
    /// their CPU time, so a helper that waits for a CPU is waited for):
    /// what a helper frees or releases after signalling the block's end is
    /// the iteration's work, counted every time rather than when the
    /// scheduler lets it in before the window closes. The wall clock has
    /// stopped by then; an instruction window around this one counts the
    /// helpers' tails too.
    static func stop(_ selection: Selection) -> cstrobe_counts? {
        guard !selection.isEmpty else { return nil }
        _ = cstrobe_counting_settle(settleLimitNanoseconds)
        return cstrobe_counting_end()
    }

    /// Closes the window, if one is open, without reading it: after a block
    /// that threw.
    package static func abandon() {
        if cstrobe_counting_is_open() != 0 { _ = cstrobe_counting_end() }
    }

    /// The metrics of one sample of `counts`.
    static func metrics(_ counts: cstrobe_counts?, _ selection: Selection) -> [PerfMetric] {
        guard let counts else { return [] }
        var metrics: [PerfMetric] = []
        if selection.allocations {
            let remaining = Double(counts.allocations) - Double(counts.frees)
            let bytes = Double(counts.allocated_bytes)
            metrics += [
                PerfMetric(name: "allocations", unit: "count", better: .lower, samples: [Double(counts.allocations)]),
                PerfMetric(name: "allocations.bytes", unit: "bytes", better: .lower, samples: [bytes]),
                PerfMetric(name: "allocations.remaining", unit: "count", better: .lower, samples: [remaining]),
            ]
        }
        if selection.retains {
            metrics += [
                PerfMetric(name: "retains", unit: "count", better: .lower, samples: [Double(counts.retains)]),
                PerfMetric(name: "releases", unit: "count", better: .lower, samples: [Double(counts.releases)]),
            ]
        }
        return metrics
    }
}
