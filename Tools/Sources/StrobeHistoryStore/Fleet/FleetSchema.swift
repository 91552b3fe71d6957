/// The tables of a fleet's traces (schema version 3; see ``HistorySchema``).
///
/// - `strobe_fleet_traces`: a row per ingested trace, keyed by `id`,
///   `sha256:` and the digest of the trace's bytes (so a trace ingested twice
///   is stored once): where it was read from (`source`), the sampling
///   probability that admitted its session (1 when the trace does not say),
///   and when it was added.
/// - `strobe_fleet_trace_metadata`: the trace's metadata (`app.version`,
///   `device.model`, the app's own dimensions), a row per key.
/// - `strobe_fleet_metrics`: per trace, per interval name (`kind`
///   `interval`, durations in nanoseconds) and per counter (`kind`
///   `counter`, its values): the count, the total, and the serialized
///   ``StrobeStatistics/QuantileSketch`` of the values, so that a report can
///   merge any set of sessions and resample them.
enum FleetSchema {
    /// The statements of version 3.
    static func migration(_ dialect: HistorySchema.Dialect) -> [String] {
        [
            """
            CREATE TABLE strobe_fleet_traces (
                id TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                sampling_probability DOUBLE PRECISION NOT NULL,
                added_at_ns BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE strobe_fleet_trace_metadata (
                trace TEXT NOT NULL REFERENCES strobe_fleet_traces (id) ON DELETE CASCADE,
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (trace, key)
            )
            """,
            "CREATE INDEX strobe_fleet_trace_metadata_by_value ON strobe_fleet_trace_metadata (key, value)",
            """
            CREATE TABLE strobe_fleet_metrics (
                trace TEXT NOT NULL REFERENCES strobe_fleet_traces (id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                count BIGINT NOT NULL,
                total DOUBLE PRECISION NOT NULL,
                sketch \(dialect.blob) NOT NULL,
                PRIMARY KEY (trace, kind, name)
            )
            """,
            "CREATE INDEX strobe_fleet_metrics_by_name ON strobe_fleet_metrics (name, kind)",
        ]
    }
}
