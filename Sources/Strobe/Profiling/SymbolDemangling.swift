import CStrobe

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A symbol's name as a profile shows it: a Swift symbol demangled and
/// shortened (``SwiftSymbolName``), a C++ one demangled, any other as it is.
package enum SymbolDemangling {
    /// The readable name of the symbol `mangled`.
    package static func readableName(_ mangled: String) -> String {
        if mangled.hasPrefix("$s") || mangled.hasPrefix("_$s") || mangled.hasPrefix("$S") {
            var buffer = [CChar](repeating: 0, count: 4096)
            let length = mangled.withCString { cstrobe_swift_demangle($0, strlen($0), &buffer, buffer.count) }
            if length > 0 {
                return SwiftSymbolName.shortened(
                    String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        if mangled.hasPrefix("_Z") {
            var buffer = [CChar](repeating: 0, count: 4096)
            let length = mangled.withCString { cstrobe_cxx_demangle($0, &buffer, buffer.count) }
            if length > 0 {
                return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return mangled
    }
}
