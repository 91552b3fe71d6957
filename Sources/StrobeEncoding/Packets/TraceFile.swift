#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only trace file. Each append writes whole packets, so the file
/// is a valid trace up to its last complete packet at every moment, even if
/// the process is killed.
package final class TraceFile {
    let path: String
    private var descriptor: Int32

    package init(creating path: String) throws(TraceFileError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        if descriptor < 0 {
            throw TraceFileError(operation: .create, path: path, errno: errno)
        }
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    package func append(_ bytes: UnsafeRawBufferPointer) throws(TraceFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw TraceFileError(operation: .write, path: path, errno: errno)
            }
            offset += written
        }
    }

    package func close() throws(TraceFileError) {
        guard descriptor >= 0 else { return }
        let result = systemClose(descriptor)
        descriptor = -1
        if result != 0 {
            throw TraceFileError(operation: .write, path: path, errno: errno)
        }
    }
}

/// A trace file that could not be created or written.
package struct TraceFileError: Error, Sendable {
    /// What failed.
    package enum Operation: Sendable {
        case create, write
    }

    package var operation: Operation
    package var path: String
    package var errno: Int32
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
