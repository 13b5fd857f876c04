import HTTPTypes

/// The apps a read token may read.
package enum ReadScope: Sendable, Equatable {
    /// Every app, present and future (an operator's or a dashboard's token).
    case allApps
    /// These apps only (one or more).
    case apps([String])

    /// Whether the token may read `app`'s data.
    func covers(_ app: String) -> Bool {
        switch self {
        case .allApps: true
        case .apps(let apps): apps.contains(app)
        }
    }

    /// The app a read request is about: the one it names (`?app=…`), which the token must cover,
    /// or, when it names none, the token's only app.
    func app(requested: String?) throws(CollectorHTTPError) -> String {
        if let requested {
            guard covers(requested) else {
                throw CollectorHTTPError(.forbidden, message: "this read token does not cover app \(requested)")
            }
            return requested
        }
        guard case .apps(let apps) = self, apps.count == 1 else {
            throw CollectorHTTPError(.badRequest, message: "this read token covers several apps: name one with ?app=APP", path: "app")
        }
        return apps[0]
    }

    /// As the read tokens file writes it: `"*"`, or the list of apps.
    var description: String {
        switch self {
        case .allApps: "*"
        case .apps(let apps): apps.joined(separator: ",")
        }
    }
}
