// Built with the package trait Server only (`--traits Server`, as the
// Makefile builds the tests).
#if Server
import Foundation
import Strobe
import StrobeReader
import StrobeTestSupport
import Testing

@testable import StrobeOTLP

/// `--otlp-endpoint` on `ingest` and `export`, against a receiver on
/// loopback (Tests/python/otlp_receiver.py) that decodes every request with
/// OpenTelemetry's own classes and answers as told.
extension StrobeCLITests {
    /// A running receiver: its port, and the requests it recorded.
    struct Receiver {
        /// One request as the receiver recorded it.
        struct Request: Decodable {
            var number: Int
            var time: Double
            var path: String
            var contentType: String?
            var status: Int
            var spans: [Span]?
            var error: String?

            enum CodingKeys: String, CodingKey {
                case number, time, path, status, spans, error
                case contentType = "content_type"
            }
        }

        /// A span as the official classes decoded it.
        struct Span: Decodable, Hashable {
            var traceID: String
            var spanID: String
            var parentSpanID: String
            var name: String
            var start: UInt64
            var end: UInt64
            var service: String?

            enum CodingKeys: String, CodingKey {
                case name, start, end, service
                case traceID = "trace_id"
                case spanID = "span_id"
                case parentSpanID = "parent_span_id"
            }
        }

        static let script: String = {
            var url = URL(fileURLWithPath: #filePath)
            for _ in 0..<4 { url.deleteLastPathComponent() }
            return url.appendingPathComponent("Tests/python/otlp_receiver.py").path
        }()

        /// Why the receiver cannot run here, or nil when it can.
        static let unavailableReason: String? = {
            let check = try? runProgram(
                "/usr/bin/env", ["python3", "-c", "import opentelemetry.proto.collector.trace.v1.trace_service_pb2"])
            return check?.status == 0 ? nil : "the Python package opentelemetry-proto is not installed"
        }()

        /// Whether the receiver's tests run: always in CI (failing there if
        /// the package is missing), elsewhere when the package is there.
        static var isUsable: Bool {
            if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
            if let reason = unavailableReason {
                print("skipping the OTLP endpoint tests: \(reason)")
                return false
            }
            return true
        }

        let process: Process
        let port: Int
        let log: String

        /// The endpoint URL a sender is given.
        var url: String { "http://127.0.0.1:\(port)/v1/traces" }

        /// Starts a receiver answering `answers` in turn (the last one from
        /// then on), with `Retry-After: retryAfter` on 429 and 503.
        init(answers: [Int] = [200], retryAfter: String? = nil, log: String) throws {
            self.log = log
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments =
                ["python3", Self.script, "--out", log, "--answers", answers.map(String.init).joined(separator: ",")]
                + (retryAfter.map { ["--retry-after", $0] } ?? [])
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line += chunk
            }
            guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                kill(process.processIdentifier, SIGKILL)
                throw ReceiverFailure(
                    message: "the receiver did not print its port: \(String(decoding: line, as: UTF8.self))")
            }
            self.port = port
        }

        /// Stops the receiver. SIGKILL: a child of the test process may
        /// inherit a signal mask that blocks SIGTERM.
        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// The requests recorded so far.
        func requests() throws -> [Request] {
            guard FileManager.default.fileExists(atPath: log) else { return [] }
            let text = try String(contentsOfFile: log, encoding: .utf8)
            return try text.split(separator: "\n").map { try JSONDecoder().decode(Request.self, from: Data($0.utf8)) }
        }

        /// Every span of every accepted request, in the order received.
        func spans() throws -> [Span] { try requests().flatMap { $0.spans ?? [] } }
    }

    struct ReceiverFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A trace of `count` intervals, each `step` holding a `part`, with a
    /// name for the app, so a small batch bound splits it.
    static func writeLongTrace(_ path: String, count: Int) throws {
        var configuration = TraceConfiguration(outputPath: path)
        configuration.processSamplingInterval = .zero
        configuration.metadata = TraceMetadata(appName: "Lens", appVersion: "3.1")
        try TraceSession.record(configuration) {
            for index in 0..<count {
                Trace.begin("step", arguments: ["index": .int(Int64(index))])
                Trace.interval("part") {}
                Trace.end()
            }
        }
    }

    /// The (trace id, span id) pairs the export of `paths` holds, in hex.
    static func expectedIDs(_ paths: [String]) throws -> [String] {
        var ids: [String] = []
        for path in paths {
            let trace = try TraceReader.read(contentsOf: path)
            let requests = OTLPExport.requests(trace, maxBytes: .max)
            let traceID = requests.traceID.map { String(format: "%02x", $0) }.joined()
            for request in requests { ids += spanIDs(in: request.body).map { traceID + "/" + $0 } }
        }
        return ids.sorted()
    }

    /// The span ids of a request's spans, in hex and in order.
    private static func spanIDs(in body: [UInt8]) -> [String] {
        var ids: [String] = []
        var request = ProtobufFields(body)
        while let resourceSpans = request.next() {
            guard resourceSpans.number == 1, case .bytes(let resourceBytes) = resourceSpans.value else { continue }
            var resource = ProtobufFields(resourceBytes)
            while let scopeSpans = resource.next() {
                guard scopeSpans.number == 2, case .bytes(let scopeBytes) = scopeSpans.value else { continue }
                var scope = ProtobufFields(scopeBytes)
                while let span = scope.next() {
                    guard span.number == 2, case .bytes(let spanBytes) = span.value else { continue }
                    var fields = ProtobufFields(spanBytes)
                    while let field = fields.next() {
                        if field.number == 2, case .bytes(let id) = field.value {
                            ids.append(id.map { String(format: "%02x", $0) }.joined())
                        }
                    }
                }
            }
        }
        return ids
    }

    /// The seconds since the Unix epoch now, in nanoseconds.
    static func unixNow() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1e9) }

    @Test(.enabled(if: Receiver.isUsable))
    func ingestSendsEverySpanOnceInBatchesWithTheSameIdsEachTime() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fleet = folder + "/fleet"
        try FileManager.default.createDirectory(atPath: fleet, withIntermediateDirectories: true)
        let traces = (1...3).map { fleet + "/device\($0).pftrace" }
        let before = Self.unixNow()
        for trace in traces { try Self.writeLongTrace(trace, count: 40) }
        let after = Self.unixNow()
        try Self.write("not a trace\n", to: fleet + "/notes.txt")
        let expected = try Self.expectedIDs(traces)
        #expect(expected.count == 3 * 80)

        var sends: [[Receiver.Span]] = []
        for round in 1...2 {
            let receiver = try Receiver(log: folder + "/received\(round).jsonl")
            defer { receiver.stop() }
            let ingest = try Self.strobe(
                "ingest", fleet, "--otlp-endpoint", receiver.url, "--otlp-batch-bytes", "2048")
            #expect(ingest.status == 0, "\(ingest.errors)")
            #expect(ingest.output.contains("sent 240 spans of 3 traces"), "\(ingest.output)")
            #expect(ingest.errors.contains("skipped \(fleet)/notes.txt"), "\(ingest.errors)")
            let requests = try receiver.requests()
            #expect(requests.allSatisfy { $0.status == 200 && $0.error == nil }, "\(requests.compactMap(\.error))")
            #expect(requests.allSatisfy { $0.path == "/v1/traces" && $0.contentType == "application/x-protobuf" })
            // Bounded batches: several per trace.
            #expect(requests.count > 6)
            let spans = try receiver.spans()
            #expect(spans.map { "\($0.traceID)/\($0.spanID)" }.sorted() == expected)
            // Every parent was sent, in the same trace.
            let sent = Set(spans.map { "\($0.traceID)/\($0.spanID)" })
            for span in spans where !span.parentSpanID.isEmpty {
                #expect(sent.contains("\(span.traceID)/\(span.parentSpanID)"))
            }
            #expect(spans.allSatisfy { $0.service == "Lens" })
            // Unix time: the spans lie between the clock readings around
            // the recording (within a second: the wall clock may be slewed).
            #expect(spans.allSatisfy { $0.start + 1_000_000_000 >= before && $0.end <= after + 1_000_000_000 })
            #expect(spans.allSatisfy { $0.start <= $0.end })
            sends.append(spans)
        }
        #expect(Set(sends[0]) == Set(sends[1]))
    }

    @Test(.enabled(if: Receiver.isUsable))
    func ingestWaitsOutA503AndLosesNothing() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeLongTrace(trace, count: 20)
        let receiver = try Receiver(answers: [503, 503, 200], retryAfter: "1", log: folder + "/received.jsonl")
        defer { receiver.stop() }
        let ingest = try Self.strobe("ingest", trace, "--otlp-endpoint", receiver.url, "--otlp-batch-bytes", "2048")
        #expect(ingest.status == 0, "\(ingest.errors)")
        #expect(ingest.output.contains("sent 40 spans of 1 trace"), "\(ingest.output)")
        #expect(ingest.output.contains("2 retried"), "\(ingest.output)")
        let requests = try receiver.requests()
        #expect(requests.prefix(2).map(\.status) == [503, 503])
        // Retry-After: 1 was honoured.
        if requests.count >= 3 {
            #expect(requests[1].time - requests[0].time >= 0.9)
            #expect(requests[2].time - requests[1].time >= 0.9)
        }
        let spans = try receiver.spans()
        #expect(spans.map { "\($0.traceID)/\($0.spanID)" }.sorted() == (try Self.expectedIDs([trace])))
    }

    @Test(.enabled(if: Receiver.isUsable))
    func aRefusedTraceExitsWithStatus2NamingItAndTheBatch() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)
        let receiver = try Receiver(answers: [400], log: folder + "/received.jsonl")
        defer { receiver.stop() }

        let ingest = try Self.strobe("ingest", trace, "--otlp-endpoint", receiver.url)
        #expect(ingest.status == 2, "\(ingest.output)")
        #expect(ingest.errors.contains("\(trace): batch 1 (spans 1-6 of 6)"), "\(ingest.errors)")
        #expect(ingest.errors.contains("refused it with 400 Bad Request"), "\(ingest.errors)")
        #expect(ingest.errors.contains("spans refused by the test receiver"), "\(ingest.errors)")
        #expect(ingest.errors.contains("the endpoint refused 1 trace: \(trace)"), "\(ingest.errors)")
        // Not retried.
        #expect(try receiver.requests().count == 1)

        let export = try Self.strobe("export", trace, "--format", "otlp", "--otlp-endpoint", receiver.url)
        #expect(export.status == 2)
        #expect(export.errors.contains("\(trace): batch 1"), "\(export.errors)")
    }

    @Test(.enabled(if: Receiver.isUsable))
    func exportSendsToTheEndpointAndWritesTheFileWhenAsked() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)
        let receiver = try Receiver(log: folder + "/received.jsonl")
        defer { receiver.stop() }
        let file = folder + "/app.otlp"
        let export = try Self.strobe(
            "export", trace, "--format", "otlp", "--otlp-endpoint", receiver.url, "-o", file)
        #expect(export.status == 0, "\(export.errors)")
        #expect(export.output.contains("\(trace): sent 6 spans in 1 request to \(receiver.url)"), "\(export.output)")
        let written = Self.otlpSpans(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
        let expected = Self.otlpSpans(OTLPExport.encode(try TraceReader.read(contentsOf: trace)))
        #expect(
            written.spans.sorted { $0.lexicographicallyPrecedes($1) }
                == expected.spans.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(written.resources == expected.resources)
        #expect(try receiver.spans().count == 6)
    }

    @Test func anEndpointThatCannotBeUsedIsNamed() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trace = folder + "/app.pftrace"
        try Self.writeTrace(trace)

        let https = try Self.strobe(
            "export", trace, "--format", "otlp", "--otlp-endpoint", "https://example.com/v1/traces")
        #expect(https.status == 2)
        #expect(https.errors.contains("https is not supported"), "\(https.errors)")

        let csv = try Self.strobe("export", trace, "--format", "csv", "--otlp-endpoint", "http://127.0.0.1:1/v1/traces")
        #expect(csv.status == 2)
        #expect(csv.errors.contains("--otlp-endpoint needs --format otlp"), "\(csv.errors)")

        // Nothing listens on the port: every attempt fails, and a failure to
        // deliver is exit status 2 (1 is a regression), for both commands.
        let socket = try #require(Self.closedPort())
        let closed = "http://127.0.0.1:\(socket)/v1/traces"
        let refused = try Self.strobe("ingest", trace, "--otlp-endpoint", closed, "--otlp-attempts", "2")
        #expect(refused.status == 2, "\(refused.output)")
        #expect(refused.errors.contains("\(trace): batch 1"), "\(refused.errors)")
        #expect(refused.errors.contains("cannot connect to 127.0.0.1:\(socket)"), "\(refused.errors)")
        #expect(refused.errors.contains("2 attempts, giving up"), "\(refused.errors)")
        let exported = try Self.strobe(
            "export", trace, "--format", "otlp", "--otlp-endpoint", closed, "--otlp-attempts", "2")
        #expect(exported.status == 2, "\(exported.output)")
        #expect(exported.errors.contains("cannot connect to 127.0.0.1:\(socket)"), "\(exported.errors)")
    }

    @Test func endpointsRetryAfterAndBackoffParse() throws {
        let endpoint = try OTLPEndpoint(parsing: "http://[::1]:4318/v1/traces?x=1")
        #expect(endpoint.host == "::1" && endpoint.port == 4318 && endpoint.target == "/v1/traces?x=1")
        #expect(endpoint.hostHeader == "[::1]:4318")
        #expect(try OTLPEndpoint(parsing: "http://collector").target == "/")
        #expect(throws: OTLPEndpointError.self) { try OTLPEndpoint(parsing: "ftp://collector/") }
        #expect(throws: OTLPEndpointError.self) { try OTLPEndpoint(parsing: "collector:4318") }

        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(OTLPSender.retryAfter("7", now: now) == .seconds(7))
        #expect(OTLPSender.retryAfter(" 0 ", now: now) == .seconds(0))
        #expect(OTLPSender.retryAfter("Tue, 14 Nov 2023 22:13:30 GMT", now: now) == .seconds(10))
        #expect(OTLPSender.retryAfter("soon", now: now) == nil)

        let policy = OTLPSender.RetryPolicy(attempts: 5, firstWait: .milliseconds(500), longestWait: .seconds(3))
        #expect(
            (1...5).map { policy.wait(after: $0, retryAfter: nil) } == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3),
            ])
        #expect(policy.wait(after: 1, retryAfter: .seconds(60)) == .seconds(3))

        // OTLP's partial success in an answer's body.
        let partial = OTLPSender.rejectedSpans(in: [0x0a, 0x05, 0x08, 0x03, 0x12, 0x01, 0x78])
        #expect(partial.count == 3 && partial.message == "x")
        #expect(OTLPSender.rejectedSpans(in: []).count == 0)
    }

    /// A loopback port nothing listens on: one the kernel gave a socket
    /// that is closed again.
    static func closedPort() -> Int? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }
}
#endif
