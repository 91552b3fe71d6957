import CStrobe

extension Trace {
    /// An interval opened with ``Trace/beginAsync(_:arguments:)``;
    /// end it from any thread.
    public struct AsyncInterval: Sendable, Hashable {
        /// The interval's identifier; 0 when nothing was recorded.
        @usableFromInline package let id: UInt64
        /// Whether the interval is written when it ends, under the name its
        /// end gives: it was opened `renamable`, or with `startedAgo`.
        @usableFromInline package let isRenamable: Bool

        @usableFromInline
        init(id: UInt64, renamable: Bool = false) {
            self.id = id
            isRenamable = renamable
        }

        /// Closes the interval, with arguments or none, on whichever thread
        /// runs this.
        ///
        /// The arguments join those of the begin; where both name the same
        /// key, the end's value wins.
        ///
        /// ```swift
        /// let download = Trace.beginAsync("download")
        /// let bytes = try await fetch()
        /// download.end(arguments: ["bytes": .int(Int64(bytes.count))])
        /// ```
        @inlinable
        public func end(arguments: KeyValuePairs<StaticString, ArgumentValue> = [:]) {
            guard id != 0, cstrobe_load_generation() != 0 else { return }
            if arguments.isEmpty {
                Trace.recordAsyncEnd(id: id)
            } else {
                Trace.recordAsyncEnd(id: id, arguments: arguments)
            }
        }

        /// Closes the interval with arguments whose keys are known at run
        /// time, on whichever thread runs this.
        ///
        /// See ``end(arguments:)``.
        ///
        /// - Parameters:
        ///   - arguments: Values shown with the interval.
        ///   - endedAgo: How long before this call the interval ended; the
        ///     end is never placed before the begin.
        @inlinable
        public func end(arguments: [Argument], endedAgo: Duration = .zero) {
            guard id != 0, cstrobe_load_generation() != 0 else { return }
            let ago = Trace.nanoseconds(endedAgo)
            if ago == 0 {
                Trace.recordAsyncEnd(id: id, arguments: arguments)
            } else {
                Trace.recordAsyncEnd(id: id, newName: 0, endedAgo: ago, arguments: arguments)
            }
        }

        /// Closes the interval under a new name, with arguments, on whichever
        /// thread runs this.
        ///
        /// An interval opened with `renamable: true` (or `startedAgo`) is
        /// written under `name`. Any other was written under its first name
        /// when it began, so it keeps that name and records `name` as the
        /// argument `name`.
        ///
        /// ```swift
        /// let request = Trace.beginAsync(Trace.Name("HTTP GET"), renamable: true)
        /// let route = try await handle()
        /// request.end(renamedTo: Trace.Name("GET \(route)"))
        /// ```
        ///
        /// - Parameters:
        ///   - name: The interval's final name.
        ///   - arguments: Values shown with the interval.
        ///   - endedAgo: How long before this call the interval ended; the
        ///     end is never placed before the begin.
        @inlinable
        public func end(renamedTo name: Name, arguments: [Argument] = [], endedAgo: Duration = .zero) {
            guard id != 0, cstrobe_load_generation() != 0 else { return }
            let ago = Trace.nanoseconds(endedAgo)
            if isRenamable {
                Trace.recordAsyncEnd(id: id, newName: name.word, endedAgo: ago, arguments: arguments)
            } else {
                let arguments = arguments + [Argument(Name("name"), .string(name.text))]
                Trace.recordAsyncEnd(id: id, newName: 0, endedAgo: ago, arguments: arguments)
            }
        }
    }
}
