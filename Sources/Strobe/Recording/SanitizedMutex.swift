import CStrobe
import Synchronization

/// The SDK's one lock: Synchronization's `Mutex`, told to ThreadSanitizer.
///
/// Every lock in the SDK is one of these. `Synchronization.Mutex` cannot
/// serve alone: on Linux it waits on a futex that ThreadSanitizer does not
/// see, so every access it guards would look like a race and `make tsan`
/// could not check the recording code. Inside the lock this type tells the
/// sanitizer that the lock was taken and released
/// (`cstrobe_sanitizer_acquire`, a no-op in builds without it). It has its
/// own name so that it never shadows the standard one; modules outside the
/// SDK use `Synchronization.Mutex` directly. (The C side's
/// `pthread_mutex_t`s guard only the crash handler's install and its name
/// table, and the writer's wakeup is a condition variable, `Semaphore`.)
struct SanitizedMutex<Value: ~Copyable>: ~Copyable {
    private let base: Synchronization.Mutex<Value>
    /// The address that stands for the lock in what the sanitizer is told.
    private let token = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    /// A mutex guarding `initialValue`.
    init(_ initialValue: consuming sending Value) {
        base = Mutex(initialValue)
    }

    deinit { token.deallocate() }

    /// Runs `body` with the guarded value while holding the lock.
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let token = token
        return try base.withLock { (value: inout sending Value) throws(E) -> sending Result in
            cstrobe_sanitizer_acquire(token)
            defer { cstrobe_sanitizer_release(token) }
            return try body(&value)
        }
    }
}

// `@unchecked Sendable`, as `Synchronization.Mutex` is: the value is reached
// only inside the lock, and `token` is an address the sanitizer is told
// about, never read or written.
extension SanitizedMutex: @unchecked Sendable where Value: ~Copyable {}
