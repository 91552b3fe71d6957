import CLibPQ
import Foundation

/// A connection to a PostgreSQL server through libpq, PostgreSQL's own C
/// client library.
///
/// Every call blocks until the server answers, so a connection belongs to
/// one thread at a time, off Swift's cooperative pool
/// (the run history's PostgreSQL store runs on a dispatch queue of its
/// own). Released, it closes the connection.
package final class PostgresConnection {
    private let connection: OpaquePointer

    /// Connects with `settings`, libpq's connection keywords and their
    /// values (`host`, `port`, `user`, `dbname`, `connect_timeout`,
    /// `sslmode`, `password`, …), within the connect timeout they name.
    ///
    /// The settings go to libpq as keyword and value arrays, never as a
    /// connection string, so no value is parsed as another setting. libpq
    /// counts the timeout in whole seconds, at least 2, for each address
    /// the host name resolves to. Without a password, libpq looks in
    /// `PGPASSWORD` and then in `~/.pgpass`. The client encoding is always
    /// UTF-8 and the application name `strobe`.
    ///
    /// - Throws: ``PostgresError`` with libpq's message: the server cannot
    ///   be reached or did not answer in time, the login or the database was
    ///   refused.
    package init(settings given: [(keyword: String, value: String)]) throws(PostgresError) {
        let settings =
            given.map { ($0.keyword, $0.value) } + [("client_encoding", "UTF8"), ("application_name", "strobe")]
        for (keyword, value) in settings where value.utf8.contains(0) {
            throw PostgresError("the \(keyword) contains a NUL character")
        }

        let keywords = settings.map { strdup($0.0) } + [nil]
        let values = settings.map { strdup($0.1) } + [nil]
        defer {
            for pointer in keywords + values { free(pointer) }
        }
        // expand_dbname 0: the database name is a name, never a connection string.
        let opened = keywords.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { keywords in
            values.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { values in
                PQconnectdbParams(keywords.baseAddress, values.baseAddress, 0)
            }
        }
        guard let opened else { throw PostgresError("libpq could not allocate a connection") }
        guard PQstatus(opened) == CONNECTION_OK else {
            let message = PQerrorMessage(opened).map { String(cString: $0) } ?? "connection failed"
            PQfinish(opened)
            throw PostgresError(message)
        }
        // The server's notices ("relation already exists, skipping") are
        // not the caller's output: libpq would print them on stderr.
        PQsetNoticeProcessor(opened, { _, _ in }, nil)
        connection = opened
    }

    deinit {
        PQfinish(connection)
    }

    /// Runs one statement, with `parameters` bound to `$1`, `$2`, … (sent
    /// apart from the SQL, as text), and returns its rows.
    ///
    /// - Throws: ``PostgresError`` with the server's message and SQLSTATE,
    ///   or libpq's message when the connection failed; a parameter that
    ///   holds a NUL character (which PostgreSQL's text cannot) is refused
    ///   before anything is sent.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [any PostgresParameter] = []) throws(PostgresError)
        -> PostgresResult
    {
        let texts = parameters.map(\.postgresText)
        for (index, text) in texts.enumerated() where text?.utf8.contains(0) == true {
            throw PostgresError("parameter $\(index + 1) contains a NUL character, which PostgreSQL text cannot hold")
        }
        let copies = texts.map { $0.map { strdup($0) } ?? nil }
        defer {
            for pointer in copies { free(pointer) }
        }
        // Text parameters (formats and lengths NULL), binary results (1).
        let result = copies.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { values in
            PQexecParams(connection, sql, Int32(values.count), nil, values.baseAddress, nil, nil, 1)
        }
        guard let result else {
            throw PostgresError(PQerrorMessage(connection).map { String(cString: $0) } ?? "libpq returned no result")
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return PostgresResult(result)
        default:
            defer { PQclear(result) }
            let sqlState = PQresultErrorField(result, strobe_pq_diag_sqlstate).map { String(cString: $0) }
            let message =
                PQresultErrorField(result, strobe_pq_diag_message_primary).map { String(cString: $0) }
                ?? PQresultErrorMessage(result).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
                ?? PQerrorMessage(connection).map { String(cString: $0) }
                ?? "the statement failed"
            throw PostgresError(message, sqlState: sqlState)
        }
    }
}
