import Foundation

/// A trace whose OTLP send stopped: the trace file, the batch, what the
/// endpoint answered (or why no answer came) and how many attempts were
/// made. The batches before it were accepted; it and those after it were
/// not sent.
public struct OTLPSendError: Error, CustomStringConvertible {
    /// Where in a trace's send a batch stands.
    public struct Batch: Sendable, Equatable {
        /// The trace file.
        public var trace: String
        /// The batch, from 1.
        public var number: Int
        /// Its spans, as indexes into the trace's export.
        public var spans: Range<Int>
        /// Spans in the whole export; nil when not yet known (a streaming
        /// export that has not read the whole trace).
        public var totalSpans: Int?
        /// Batches of the trace the endpoint accepted before this one.
        public var acceptedBatches: Int
    }

    /// What went wrong with the batch.
    public enum Problem: Sendable, Equatable {
        /// The endpoint answered with this status, reason phrase and the
        /// start of its body.
        case status(Int, reason: String, body: String)
        /// No answer: the connection failed, closed early or timed out.
        case connection(String)
    }

    /// The batch that stopped the send.
    public var batch: Batch
    /// Its last attempt's problem.
    public var problem: Problem
    /// Attempts made for the batch.
    public var attempts: Int
    /// Where it was sent.
    public var endpoint: OTLPEndpoint

    /// Whether the endpoint refused the batch (a status that is not
    /// retried), rather than staying busy or unreachable through every
    /// attempt.
    public var isRefusal: Bool {
        if case .status(let status, _, _) = problem { return !OTLPSender.retryable.contains(status) }
        return false
    }

    /// The trace, the batch, the answer, and what was and was not sent.
    public var description: String {
        let place =
            "\(batch.trace): batch \(batch.number) (spans \(batch.spans.lowerBound + 1)-\(batch.spans.upperBound)"
            + (batch.totalSpans.map { " of \($0))" } ?? ")")
        let answer: String
        switch problem {
        case .status(let status, let reason, let body):
            let said = body.isEmpty ? "" : ": \(body)"
            answer =
                isRefusal
                ? "\(endpoint) refused it with \(status) \(reason)\(said)"
                : "\(endpoint) answered \(status) \(reason)\(said), \(attempts) attempts, giving up"
        case .connection(let words):
            answer = "\(endpoint): \(words), \(attempts) attempt\(attempts == 1 ? "" : "s"), giving up"
        }
        let sent =
            batch.acceptedBatches == 0
            ? "nothing of the trace was accepted"
            : "its first \(batch.acceptedBatches) batch\(batch.acceptedBatches == 1 ? " was" : "es were") accepted, "
                + "the rest was not sent"
        return "\(place): \(answer); \(sent)"
    }

    /// The start of a reply's body as text for a message: at most 200
    /// characters, on one line.
    static func excerpt(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(400), as: UTF8.self)
        let line = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter { !$0.isASCII || $0.isPrintable }
        let trimmed = String(line).trimmingCharacters(in: .whitespaces)
        return trimmed.count > 200 ? String(trimmed.prefix(200)) + "…" : trimmed
    }
}

extension Character {
    /// Whether the character is printable ASCII (space to tilde).
    fileprivate var isPrintable: Bool { (" "..."~").contains(self) }
}
