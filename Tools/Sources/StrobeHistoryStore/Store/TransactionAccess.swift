/// What a store's transaction does: write, committing all its statements or
/// none, or read, every statement seeing one snapshot.
enum TransactionAccess: Sendable {
    /// Statements that write, committed together.
    case write
    /// Statements that only read, from one snapshot of the store.
    case read
}
