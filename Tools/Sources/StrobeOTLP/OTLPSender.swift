import Foundation
import StrobeReader

/// Posts a trace's OTLP export to an OTLP/HTTP endpoint
/// (`Content-Type: application/x-protobuf`), batch by batch, in order:
/// the requests ``OTLPExport/requests(_:unixOffset:maxBytes:)`` gives.
///
/// A batch answered 429, 502, 503 or 504, or whose connection failed, is
/// sent again after an exponential backoff (or the server's `Retry-After`,
/// up to ``RetryPolicy/longestWait``), at most ``RetryPolicy/attempts``
/// times in all; any other status outside 2xx refuses the trace. Either
/// way the send stops at that batch and throws an ``OTLPSendError`` naming
/// the trace, the batch and the answer: nothing is dropped without an
/// error. A success that reports rejected spans (OTLP's partial success)
/// is told to the `warn` closure, and so is each retry.
///
/// ```swift
/// let sender = OTLPSender(endpoint: try OTLPEndpoint(parsing: "http://127.0.0.1:4318/v1/traces"))
/// let report = try await sender.send(OTLPExport.requests(trace), of: "app.pftrace")
/// ```
public struct OTLPSender: Sendable {
    /// When and how often a batch is sent again.
    public struct RetryPolicy: Sendable {
        /// Attempts per batch, the first included.
        public var attempts: Int
        /// The wait before the second attempt; each later one doubles it.
        public var firstWait: Duration
        /// The longest wait between attempts, the server's `Retry-After`
        /// included.
        public var longestWait: Duration

        /// A policy of `attempts` attempts, waiting `firstWait`, then twice
        /// as long each time, up to `longestWait`.
        public init(attempts: Int = 5, firstWait: Duration = .milliseconds(500), longestWait: Duration = .seconds(30)) {
            self.attempts = attempts
            self.firstWait = firstWait
            self.longestWait = longestWait
        }

        /// The wait before attempt `attempt + 1` (attempt counts from 1),
        /// from the server's `Retry-After` when it gave one.
        func wait(after attempt: Int, retryAfter: Duration?) -> Duration {
            if let retryAfter { return min(max(retryAfter, .zero), longestWait) }
            var wait = firstWait
            for _ in 1..<max(attempt, 1) where wait < longestWait { wait *= 2 }
            return min(wait, longestWait)
        }
    }

    /// What a trace's send did.
    public struct Report: Sendable, Equatable {
        /// Requests the endpoint accepted.
        public var batches = 0
        /// Spans in them.
        public var spans = 0
        /// Attempts beyond the first, over all batches.
        public var retries = 0
        /// Spans the endpoint said it rejected in a successful answer
        /// (OTLP's partial success).
        public var rejectedSpans = 0

        /// An empty report.
        public init() {}
    }

    /// Where the requests go.
    public var endpoint: OTLPEndpoint
    /// When to send a batch again.
    public var retry: RetryPolicy
    /// The longest one attempt may wait for its reply.
    public var replyTimeout: Duration

    /// A sender to `endpoint`.
    public init(endpoint: OTLPEndpoint, retry: RetryPolicy = RetryPolicy(), replyTimeout: Duration = .seconds(60)) {
        self.endpoint = endpoint
        self.retry = retry
        self.replyTimeout = replyTimeout
    }

    /// Sends every request of `requests`, the export of the trace file
    /// `trace` (named in errors and warnings), in order.
    public func send(
        _ requests: OTLPRequests, of trace: String, warn: (String) -> Void = { _ in }
    ) async throws(OTLPSendError) -> Report {
        var report = Report()
        let post = HTTPPost(endpoint: endpoint, replyTimeout: replyTimeout)
        let total = requests.spanCount
        for request in requests {
            try await deliver(request, of: trace, totalSpans: total, report: &report, post: post, warn: warn)
        }
        return report
    }

    /// Sends the requests of `stream`, the streaming export of the trace
    /// file `trace`, each as soon as it is made, so that a trace of any
    /// size is sent in bounded memory; `alongside` gets each request's body
    /// first (to write the export to a file as well).
    ///
    /// - Throws: ``OTLPSendError`` for a batch not accepted, the reader's
    ///   `TraceReadError` when the file cannot be read, and what
    ///   `alongside` throws.
    public func send(
        _ stream: inout OTLPStream, of trace: String, alongside: ([UInt8]) throws -> Void = { _ in },
        warn: (String) -> Void = { _ in }
    ) async throws -> Report {
        var report = Report()
        let post = HTTPPost(endpoint: endpoint, replyTimeout: replyTimeout)
        while let request = try stream.next() {
            try alongside(request.body)
            try await deliver(
                request, of: trace, totalSpans: stream.totalSpans, report: &report, post: post, warn: warn)
        }
        return report
    }

    /// Posts one request until it is accepted, retrying as the policy
    /// says; throws when it is refused or every attempt fails.
    private func deliver(
        _ request: OTLPRequests.Request, of trace: String, totalSpans total: Int?, report: inout Report,
        post: HTTPPost, warn: (String) -> Void
    ) async throws(OTLPSendError) {
        let batch = OTLPSendError.Batch(
            trace: trace, number: request.number, spans: request.spans, totalSpans: total,
            acceptedBatches: report.batches)
        var attempt = 1
        attempts: while true {
            let outcome: Result<HTTPPost.Reply, HTTPPost.Failure>
            do {
                outcome = .success(try await post.post(request.body, contentType: "application/x-protobuf"))
            } catch {
                outcome = .failure(error)
            }
            var retryAfter: Duration?
            let problem: OTLPSendError.Problem
            switch outcome {
            case .success(let reply) where (200..<300).contains(reply.status):
                let rejected = Self.rejectedSpans(in: reply.body)
                if rejected.count > 0 {
                    report.rejectedSpans += rejected.count
                    warn(
                        "\(trace): batch \(request.number): the endpoint accepted the request but rejected "
                            + "\(rejected.count) of its \(request.spans.count) spans"
                            + (rejected.message.isEmpty ? "" : ": \(rejected.message)"))
                }
                report.batches += 1
                report.spans += request.spans.count
                report.retries += attempt - 1
                break attempts
            case .success(let reply):
                problem = .status(reply.status, reason: reply.reason, body: OTLPSendError.excerpt(reply.body))
                guard Self.retryable.contains(reply.status) else {
                    throw OTLPSendError(batch: batch, problem: problem, attempts: attempt, endpoint: endpoint)
                }
                retryAfter = reply.header("Retry-After").flatMap { Self.retryAfter($0, now: Date()) }
            case .failure(let failure):
                problem = .connection(failure.description)
            }
            guard attempt < retry.attempts else {
                throw OTLPSendError(batch: batch, problem: problem, attempts: attempt, endpoint: endpoint)
            }
            let wait = retry.wait(after: attempt, retryAfter: retryAfter)
            let answer: String
            switch problem {
            case .status(let status, let reason, _): answer = "\(status) \(reason)"
            case .connection(let words): answer = words
            }
            warn(
                "\(trace): batch \(request.number): \(answer); attempt \(attempt + 1) of \(retry.attempts) in "
                    + "\(wait.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
            try? await Task.sleep(for: wait)
            attempt += 1
        }
    }

    /// The statuses OTLP/HTTP says to retry.
    public static let retryable: Set<Int> = [429, 502, 503, 504]

    /// A `Retry-After` value (delay seconds, or an HTTP date) as a wait
    /// from `now`; nil when it is neither.
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        let seconds = max(date.timeIntervalSince(now), 0)
        return .milliseconds(Int64(seconds * 1000))
    }

    /// The `partial_success` of an `ExportTraceServiceResponse`: rejected
    /// spans and the message; zero for any other body (JSON, empty, not a
    /// response).
    static func rejectedSpans(in body: [UInt8]) -> (count: Int, message: String) {
        var reader = ProtobufFields(body)
        while let field = reader.next() {
            guard field.number == 1, case .bytes(let partial) = field.value else { continue }
            var inner = ProtobufFields(partial)
            var count = 0
            var message = ""
            while let field = inner.next() {
                switch (field.number, field.value) {
                case (1, .varint(let value)): count = Int(truncatingIfNeeded: Int64(bitPattern: value))
                case (2, .bytes(let text)): message = String(decoding: text, as: UTF8.self)
                default: continue
                }
            }
            return (max(count, 0), message)
        }
        return (0, "")
    }
}

/// The fields of a protobuf message, one level deep; stops at the first
/// malformed one.
struct ProtobufFields {
    enum Value {
        case varint(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed
    }

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = ArraySlice(bytes)
        index = self.bytes.startIndex
    }

    private mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    mutating func next() -> (number: UInt64, value: Value)? {
        guard index < bytes.endIndex, let tag = varint() else { return nil }
        switch tag & 7 {
        case 0:
            guard let value = varint() else { return nil }
            return (tag >> 3, .varint(value))
        case 1, 5:
            let size = tag & 7 == 1 ? 8 : 4
            guard bytes.endIndex - index >= size else { return nil }
            index += size
            return (tag >> 3, .fixed)
        case 2:
            guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return nil }
            let start = index
            index += Int(length)
            return (tag >> 3, .bytes(bytes[start..<index]))
        default:
            return nil
        }
    }
}
