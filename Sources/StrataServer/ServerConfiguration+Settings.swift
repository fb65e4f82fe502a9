import Foundation

extension ServerConfiguration {
    /// The settings Strata has, under CouchDB's section and key names, as
    /// `GET /_node/_local/_config` shows them (values are text, as in an
    /// ini file).
    var couchSettings: [String: [String: String]] {
        let seconds = { (duration: Duration) in String(duration.components.seconds) }
        return [
            "couchdb": [
                "default_security": defaultSecurity.rawValue,
                "single_node": "true",
                "max_attachment_size": String(CouchServer.maximumAttachmentSize),
                "os_process_timeout": String(functionTimeLimit.components.seconds * 1000 + functionTimeLimit.components.attoseconds / 1_000_000_000_000_000),
            ],
            "chttpd": [
                "enable_cors": String(cors.enabled),
                "max_http_request_size": String(CouchServer.maximumBodySize),
                "require_valid_user": "false",
            ],
            "cors": [
                "origins": cors.origins.joined(separator: ", "),
                "credentials": String(cors.credentials),
                "methods": cors.methods.joined(separator: ", "),
                "headers": cors.headers.joined(separator: ", "),
                "exposed_headers": cors.exposedHeaders.joined(separator: ", "),
                "max_age": String(cors.maxAge),
            ],
            "chttpd_auth": [
                "timeout": seconds(sessionTimeout),
                "iterations": String(passwordIterations),
                "authentication_db": "_users",
            ],
            "chttpd_auth_lockout": [
                "mode": lockout.mode.rawValue,
                "threshold": String(lockout.threshold),
                "max_lifetime": String(lockout.lifetime.components.seconds * 1000),
            ],
        ]
    }
}
