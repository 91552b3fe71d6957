import StrobeHistory

/// The tables of a run history and the migrations that build them.
///
/// Every store holds `strobe_schema`, one row with the version its tables
/// are at. Opening a store applies, in one transaction, the migrations
/// after that version; a store at a version higher than ``currentVersion``
/// was written by a newer Strobe and is refused without being changed.
///
/// Version 1:
/// - `strobe_runs`: a row per run, keyed by `id` (the run id, or `sha256:`
///   and the digest of a file that has none): `run_id` as the file has it,
///   time (`timestamp_ns`), suite, `git_commit`, `branch` (the `branch`
///   tag), host, OS, CPU model and cores, build configuration, the Strobe
///   version that wrote it, `round`, `samples_are_launches`, the
///   `comparison` and `side` of a `strobe compare` it was part of, and when
///   it was added.
/// - `strobe_run_tags`: its tags, a row per key.
/// - `strobe_tests`: a row per test: position, name, error, warm-up
///   iterations, trace paths (a JSON array).
/// - `strobe_metrics`: a row per test and metric: names, unit, direction,
///   every iteration's value (`samples`), and each process's median and
///   minimum (`replicate_medians`, `replicate_minimums`), arrays of
///   little-endian 64-bit floats; `median` is the median of the process
///   medians, for queries that want one number.
/// - `strobe_metric_units`: the unit of each suite, test and metric, and
///   the run that first stored it.
///
/// Version 2:
/// - `strobe_marks`: a verdict on a change point (``HistoryMark``): its
///   `target` (`A..B` or one commit or run id), `series` (empty for every
///   series), `verdict` (`confirmed` or `dismissed`), `note` and when it was
///   marked; one row per target and series, a later mark replacing it.
///
/// Version 3: a fleet's traces (`strobe ingest`), see ``FleetSchema``.
///
/// Version 4: `strobe_runs` gains `simulated` (the process ran under a
/// simulation such as callgrind: it carries counts, not times) and
/// `instruction_source` (`hardware`, `simulated`, or empty), as the results
/// file's metadata says them.
///
/// Version 5: `strobe_tests` gains `cpu_stacks`, the call stacks of the
/// test's CPU profile (`--profile`) with each one's CPU time per iteration
/// (``RunRecord/stacks``), a JSON array; `[]` for a test without a profile
/// and for every test stored before this version.
public enum HistorySchema {
    /// The version this Strobe writes.
    public static let currentVersion = 5

    /// The SQL dialects the migrations are written for.
    enum Dialect {
        case sqlite, postgres

        var blob: String { self == .sqlite ? "BLOB" : "BYTEA" }
        var falseValue: String { self == .sqlite ? "0" : "FALSE" }
    }

    /// The statements that take a store from version `index` to `index + 1`.
    static func migrations(_ dialect: Dialect) -> [[String]] {
        [
            [
                """
                CREATE TABLE strobe_runs (
                    id TEXT PRIMARY KEY,
                    run_id TEXT NOT NULL,
                    timestamp_ns BIGINT NOT NULL,
                    suite TEXT NOT NULL,
                    git_commit TEXT NOT NULL,
                    branch TEXT NOT NULL,
                    host TEXT NOT NULL,
                    os TEXT NOT NULL,
                    cpu_model TEXT NOT NULL,
                    core_count INTEGER NOT NULL,
                    build_configuration TEXT NOT NULL,
                    strobe_version TEXT NOT NULL,
                    round INTEGER,
                    samples_are_launches BOOLEAN NOT NULL,
                    comparison TEXT,
                    side TEXT,
                    added_at_ns BIGINT NOT NULL
                )
                """,
                "CREATE INDEX strobe_runs_by_time ON strobe_runs (timestamp_ns, id)",
                "CREATE INDEX strobe_runs_by_suite ON strobe_runs (suite, timestamp_ns)",
                "CREATE INDEX strobe_runs_by_branch ON strobe_runs (branch, timestamp_ns)",
                """
                CREATE TABLE strobe_run_tags (
                    run TEXT NOT NULL REFERENCES strobe_runs (id) ON DELETE CASCADE,
                    key TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (run, key)
                )
                """,
                "CREATE INDEX strobe_run_tags_by_value ON strobe_run_tags (key, value)",
                """
                CREATE TABLE strobe_tests (
                    run TEXT NOT NULL REFERENCES strobe_runs (id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    error TEXT,
                    warmup_iterations INTEGER NOT NULL,
                    trace_paths TEXT NOT NULL,
                    PRIMARY KEY (run, position)
                )
                """,
                """
                CREATE TABLE strobe_metrics (
                    run TEXT NOT NULL,
                    test_position INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    test TEXT NOT NULL,
                    name TEXT NOT NULL,
                    unit TEXT NOT NULL,
                    lower_is_better BOOLEAN NOT NULL,
                    samples \(dialect.blob) NOT NULL,
                    replicate_medians \(dialect.blob) NOT NULL,
                    replicate_minimums \(dialect.blob) NOT NULL,
                    median DOUBLE PRECISION,
                    PRIMARY KEY (run, test_position, position),
                    FOREIGN KEY (run, test_position) REFERENCES strobe_tests (run, position) ON DELETE CASCADE
                )
                """,
                "CREATE INDEX strobe_metrics_by_name ON strobe_metrics (test, name)",
                """
                CREATE TABLE strobe_metric_units (
                    suite TEXT NOT NULL,
                    test TEXT NOT NULL,
                    metric TEXT NOT NULL,
                    unit TEXT NOT NULL,
                    first_run TEXT NOT NULL,
                    PRIMARY KEY (suite, test, metric)
                )
                """,
            ],
            [
                """
                CREATE TABLE strobe_marks (
                    target TEXT NOT NULL,
                    series TEXT NOT NULL,
                    verdict TEXT NOT NULL,
                    note TEXT NOT NULL,
                    marked_at_ns BIGINT NOT NULL,
                    PRIMARY KEY (target, series)
                )
                """
            ],
            FleetSchema.migration(dialect),
            [
                "ALTER TABLE strobe_runs ADD COLUMN simulated BOOLEAN NOT NULL DEFAULT \(dialect.falseValue)",
                "ALTER TABLE strobe_runs ADD COLUMN instruction_source TEXT NOT NULL DEFAULT ''",
            ],
            ["ALTER TABLE strobe_tests ADD COLUMN cpu_stacks TEXT NOT NULL DEFAULT '[]'"],
        ]
    }

    /// The error for a store at `version`, newer than this code.
    static func newer(_ version: Int, store: String) -> HistoryError {
        HistoryError(
            .newerSchema,
            "\(store): the history's schema is at version \(version), but this strobe knows versions up to "
                + "\(currentVersion); use a newer strobe (the store was left unchanged)"
        )
    }
}
