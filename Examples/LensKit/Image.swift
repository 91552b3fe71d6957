/// An RGBA image of 32-bit floats, row by row.
public struct Image: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Channel values, four per pixel.
    public var pixels: [Float]

    /// A black image.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [Float](repeating: 0, count: width * height * 4)
    }

    /// Bytes of pixel storage.
    public var byteCount: Int { pixels.count * MemoryLayout<Float>.stride }

    /// A synthetic camera frame: gradients and moving stripes, so every frame
    /// differs and no filter work can be skipped.
    public static func cameraFrame(width: Int, height: Int, frame: Int) -> Image {
        var image = Image(width: width, height: height)
        image.capture(frame: frame)
        return image
    }

    /// Renders synthetic camera frame `frame` into this image's storage, as a
    /// camera writes into a buffer of its pool: no allocation, and no page
    /// faults once the storage has been written.
    public mutating func capture(frame: Int) {
        let width = width
        let height = height
        let phase = Float(frame % 64) / 64
        pixels.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                let fy = Float(y) / Float(height)
                for x in 0..<width {
                    let fx = Float(x) / Float(width)
                    let stripe: Float = ((x + y + frame * 3) / 7) % 2 == 0 ? 0.15 : 0
                    let base = (y * width + x) * 4
                    pixels[base] = fx * 0.8 + stripe
                    pixels[base + 1] = fy * 0.7 + phase * 0.2
                    pixels[base + 2] = (1 - fx) * 0.6 + stripe
                    pixels[base + 3] = 1
                }
            }
        }
    }
}
