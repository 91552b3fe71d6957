import Foundation

/// A camera lens effect: a colour grade (a 4×4 matrix on every pixel), a film
/// tone curve looked up in a table, a soft blur and a vignette, applied to
/// bands of rows.
///
/// The kernels reproduce two regressions of different kinds. The scalar one
/// grades one channel at a time: a build change that lost vectorization,
/// whose cost depends on the CPU's vector units. The rebuilt-curve one builds
/// the tone curve's table on every call instead of once per lens: a mistake
/// in the code, whose cost is the same scalar arithmetic on any CPU.
public struct Lens: Sendable {
    /// How the lens runs.
    public enum Kernel: String, Sendable, CaseIterable {
        /// The colour grade four channels at a time on SIMD vectors, the tone
        /// curve's table built once per lens.
        case vectorized
        /// The colour grade one channel at a time, through an out-of-line call.
        case scalar
        /// As `vectorized`, but the tone curve's table is rebuilt on every
        /// call, for every band of every frame (`LENS_KERNEL=rebuilt-curve`).
        case rebuiltCurve = "rebuilt-curve"
    }

    /// Entries of the tone curve's table: 12 bits of input precision.
    public static let toneCurveEntries = 4096

    /// The colour matrix, row-major.
    public let matrix: [Float]
    /// The kernel the grade runs on.
    public let kernel: Kernel
    /// How many times the grade runs per pixel (the lens's strength).
    public let gradePasses: Int
    /// How many times the blur runs (its softness).
    public let blurPasses: Int
    /// The tone curve: `toneCurveEntries` values over [0, 1] for each of
    /// red, green and blue.
    private let toneCurve: [Float]

    /// A warm lens with a soft vignette.
    public init(kernel: Kernel, gradePasses: Int = 2, blurPasses: Int = 1) {
        self.kernel = kernel
        self.gradePasses = gradePasses
        self.blurPasses = blurPasses
        matrix = [
            0.393, 0.769, 0.189, 0,
            0.349, 0.686, 0.168, 0,
            0.272, 0.534, 0.131, 0,
            0, 0, 0, 1,
        ]
        toneCurve = Lens.makeToneCurve()
    }

    /// The film's response per channel (red, green, blue, one after the
    /// other): a gamma lift a little warmer in red than in blue, a toe, an
    /// exponential shoulder, and a smooth roll-off at both ends.
    static func makeToneCurve() -> [Float] {
        let last = Float(toneCurveEntries - 1)
        let gammas: [Float] = [1 / 2.0, 1 / 2.2, 1 / 2.4]
        return gammas.flatMap { gamma in
            (0..<toneCurveEntries).map { index in
                let lifted = powf(Float(index) / last, gamma)
                let toe = powf(lifted, 1.15)
                let shoulder = (1 - expf(-3 * toe)) / (1 - expf(-3))
                return shoulder * shoulder * (3 - 2 * shoulder)
            }
        }
    }

    /// Applies the lens to rows `rows` of `image`, writing into `output`.
    public func apply(to image: Image, rows: Range<Int>, into output: UnsafeMutableBufferPointer<Float>) {
        let width = image.width
        image.pixels.withUnsafeBufferPointer { input in
            let start = rows.lowerBound * width * 4
            let end = rows.upperBound * width * 4
            for index in stride(from: start, to: end, by: 1) { output[index] = input[index] }
            for _ in 0..<gradePasses {
                switch kernel {
                case .vectorized, .rebuiltCurve: gradeVectorized(output, from: start, to: end)
                case .scalar: gradeScalar(output, from: start, to: end)
                }
            }
            switch kernel {
            case .vectorized, .scalar:
                toneCurve.withUnsafeBufferPointer { applyToneCurve($0, output, from: start, to: end) }
            case .rebuiltCurve:
                Lens.makeToneCurve().withUnsafeBufferPointer { applyToneCurve($0, output, from: start, to: end) }
            }
            for _ in 0..<blurPasses {
                blur(input, output, width: width, height: image.height, rows: rows)
            }
            vignette(output, width: width, height: image.height, rows: rows)
        }
    }

    /// Darkens the corners: the same code whichever kernel grades.
    private func vignette(_ pixels: UnsafeMutableBufferPointer<Float>, width: Int, height: Int, rows: Range<Int>) {
        let centerX = Float(width) / 2
        let centerY = Float(height) / 2
        let reach = (centerX * centerX + centerY * centerY).squareRoot()
        for y in rows {
            let dy = Float(y) - centerY
            for x in 0..<width {
                let dx = Float(x) - centerX
                let distance = (dx * dx + dy * dy).squareRoot() / reach
                let falloff = 1 - 0.6 * distance * distance
                let base = (y * width + x) * 4
                pixels[base] *= falloff
                pixels[base + 1] *= falloff
                pixels[base + 2] *= falloff
            }
        }
    }

    private func gradeVectorized(_ pixels: UnsafeMutableBufferPointer<Float>, from start: Int, to end: Int) {
        let r0 = SIMD4<Float>(matrix[0], matrix[4], matrix[8], matrix[12])
        let r1 = SIMD4<Float>(matrix[1], matrix[5], matrix[9], matrix[13])
        let r2 = SIMD4<Float>(matrix[2], matrix[6], matrix[10], matrix[14])
        let r3 = SIMD4<Float>(matrix[3], matrix[7], matrix[11], matrix[15])
        let raw = UnsafeMutableRawPointer(pixels.baseAddress!)
        var offset = start
        while offset < end {
            let pixel = raw.loadUnaligned(fromByteOffset: offset * 4, as: SIMD4<Float>.self)
            var graded = r0 * pixel.x + r1 * pixel.y + r2 * pixel.z + r3 * pixel.w
            graded = graded.clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 1))
            raw.storeBytes(of: graded, toByteOffset: offset * 4, as: SIMD4<Float>.self)
            offset += 4
        }
    }

    private func gradeScalar(_ pixels: UnsafeMutableBufferPointer<Float>, from start: Int, to end: Int) {
        matrix.withUnsafeBufferPointer { matrix in
            var offset = start
            while offset < end {
                let pixel = pixels.baseAddress! + offset
                let r = pixel[0]
                let g = pixel[1]
                let b = pixel[2]
                let a = pixel[3]
                for channel in 0..<4 {
                    pixel[channel] = gradeChannel(matrix, channel, r, g, b, a)
                }
                offset += 4
            }
        }
    }

    /// Maps the red, green and blue of every pixel through their tone curves.
    private func applyToneCurve(
        _ curve: UnsafeBufferPointer<Float>, _ pixels: UnsafeMutableBufferPointer<Float>, from start: Int, to end: Int
    ) {
        let entries = Lens.toneCurveEntries
        let scale = Float(entries - 1)
        var offset = start
        while offset < end {
            for channel in 0..<3 {
                let value = min(max(pixels[offset + channel], 0), 1)
                pixels[offset + channel] = curve[channel * entries + Int(value * scale)]
            }
            offset += 4
        }
    }

    private func blur(
        _ input: UnsafeBufferPointer<Float>, _ output: UnsafeMutableBufferPointer<Float>,
        width: Int, height: Int, rows: Range<Int>
    ) {
        for y in rows {
            let above = max(y - 1, 0) * width * 4
            let below = min(y + 1, height - 1) * width * 4
            let row = y * width * 4
            for index in 0..<(width * 4) {
                let softened = (input[above + index] + input[below + index]) * 0.125
                output[row + index] = output[row + index] * 0.75 + softened
            }
        }
    }
}

/// One channel of the colour grade, kept out of line so the loop that calls
/// it cannot be vectorized: the scalar build of the kernel.
@inline(never)
func gradeChannel(
    _ matrix: UnsafeBufferPointer<Float>, _ channel: Int, _ r: Float, _ g: Float, _ b: Float, _ a: Float
) -> Float {
    let row = channel * 4
    let value = matrix[row] * r + matrix[row + 1] * g + matrix[row + 2] * b + matrix[row + 3] * a
    return min(max(value, 0), 1)
}
