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

    package init(creating path: String) throws(TraceSessionError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        if descriptor < 0 {
            throw TraceSessionError.cannotCreateFile(path: path, errno: errno)
        }
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    package func append(_ bytes: UnsafeRawBufferPointer) throws(TraceSessionError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw TraceSessionError.writeFailed(path: path, errno: errno)
            }
            offset += written
        }
    }

    package func close() throws(TraceSessionError) {
        guard descriptor >= 0 else { return }
        let result = systemClose(descriptor)
        descriptor = -1
        if result != 0 {
            throw TraceSessionError.writeFailed(path: path, errno: errno)
        }
    }
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
