import CStrobe
import Synchronization

/// Synchronization's `Mutex`, told to ThreadSanitizer.
///
/// On Linux, `Synchronization.Mutex` waits on a futex that ThreadSanitizer
/// does not see, so every access it guards looks like a race. This wrapper
/// has the same name and `withLock`, so Strobe's code reads the same; inside
/// the lock it tells the sanitizer that the lock was taken and released
/// (`cstrobe_sanitizer_acquire`, a no-op in builds without it).
struct Mutex<Value: ~Copyable>: ~Copyable {
    private let base: Synchronization.Mutex<Value>
    /// The address that stands for the lock in what the sanitizer is told.
    private let token = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    /// A mutex guarding `initialValue`.
    init(_ initialValue: consuming sending Value) {
        base = Synchronization.Mutex(initialValue)
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
extension Mutex: @unchecked Sendable where Value: ~Copyable {}
