import StrobePostgres

extension PostgresConnection {
    /// Connects to `location`, within its connect timeout; see
    /// ``PostgresConnection/init(settings:)``.
    package convenience init(_ location: PostgresLocation) throws(PostgresError) {
        var settings: [(keyword: String, value: String)] = []
        switch location.endpoint {
        case .tcp(let host, let port):
            settings += [("host", host), ("port", String(port))]
        case .unixSocket(let directory, let port):
            settings += [("host", directory), ("port", String(port))]
        }
        settings += [
            ("user", location.user), ("dbname", location.database),
            ("connect_timeout", String(Int(location.connectTimeout.rounded(.up)))),
            ("sslmode", location.tls.rawValue),
        ]
        if let password = location.password { settings.append(("password", password)) }
        try self.init(settings: settings)
    }
}
