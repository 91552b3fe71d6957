import Dispatch

/// A serial executor that runs its jobs on a dispatch queue of its own,
/// off Swift's cooperative thread pool, so that an actor on it may make
/// calls that block (libpq's) without starving other tasks.
final class DispatchQueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    /// An executor on a new serial queue named `label`.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
