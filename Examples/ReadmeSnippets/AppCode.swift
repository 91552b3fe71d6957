// The app's own code that the snippets of the README and docs/ call: what a
// reader's app would have in their place. Not a snippet itself.

import Foundation

/// A photo as the snippets' app fetches it.
struct Photo: Sendable {
    var id: String
    var bytes: [UInt8]
}

/// The client the server-tracing snippet fetches photos through.
struct PhotoClient: Sendable {
    /// Where photos come from.
    var baseURL: String

    /// The photo named `id`.
    func fetch(_ id: String) async throws -> Photo {
        try await Task.sleep(for: .milliseconds(1))
        return Photo(id: id, bytes: Array("\(baseURL)/\(id)".utf8))
    }
}

/// Photos already fetched, by id.
let cache: [String: Photo] = [:]

/// Loads the app's model at startup.
func loadModel() {
    _ = (0..<1_000).reduce(0, &+)
}

/// Fetches the photo on screen.
func fetch() async throws -> Photo {
    try await PhotoClient(baseURL: "https://photos.example").fetch("on-screen")
}

/// Applies the camera lens to the current frame.
func applyLens() {
    _ = (0..<10_000).map { Double($0).squareRoot() }.reduce(0, +)
}

/// Decodes the current frame.
func decode() {
    _ = Array(repeating: UInt8(0), count: 4096).reduce(0, &+)
}
