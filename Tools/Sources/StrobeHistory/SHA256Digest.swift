import CLibCrypto

/// SHA-256, computed by OpenSSL's libcrypto.
package enum SHA256Digest {
    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
        }
        // Hashing memory with a built-in digest fails only when libcrypto
        // cannot allocate its context.
        precondition(status == 1 && length == 32, "libcrypto could not compute a SHA-256 digest")
        return Array(digest.prefix(Int(length)))
    }

    /// The digest of `bytes` in lowercase hexadecimal.
    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(hash(bytes).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] })
    }
}
