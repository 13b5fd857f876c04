public import Foundation
public import NFLogger

extension RecordingTransport {
    /// The app key of ``configuration(databaseDirectory:appID:appVersion:)``: each batch's
    /// ``RecordedBatch/appKey``.
    public static let appKey = "test-app-key"

    /// A configuration that uploads to this transport and fetches its policy from it, with its
    /// database in a directory of its own, for one test:
    ///
    /// - `Configuration.transport` is this transport; `Configuration.uploadURL` and
    ///   `Configuration.policyURL` name `collector.invalid`, a host that never resolves
    ///   (RFC 2606), and `Configuration.appKey` is ``appKey``.
    /// - Each recorded event starts an upload (`Configuration.Upload.countThreshold` is 1), so
    ///   ``waitForEvents(count:timeout:)`` needs no flush; `NFLogger.flush()` uploads
    ///   at once anyway.
    /// - A failed upload is retried within milliseconds, not seconds
    ///   (`Configuration.Upload.initialBackoff` is 10 ms), unless your ``Response`` says
    ///   `retryAfter`.
    ///
    /// Everything else is the SDK's default; change what your test needs before creating the
    /// logger.
    ///
    /// - Parameters:
    ///   - databaseDirectory: where the database (`events.sqlite`) goes; default: a new directory
    ///     in the temporary directory, which is left behind for the system to clean.
    ///   - appID: `Configuration.appID`.
    ///   - appVersion: `Configuration.appVersion`.
    public func configuration(databaseDirectory: URL? = nil, appID: String = "com.example.tests",
                              appVersion: String = "1") -> Configuration {
        let directory = databaseDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("nflogger-tests-\(UUID().uuidString)", isDirectory: true)
        var configuration = Configuration(databaseURL: directory.appendingPathComponent("events.sqlite"),
                                          appID: appID, appVersion: appVersion)
        configuration.network.transport = self
        configuration.uploadURL = URL(string: "https://collector.invalid/v1/events")
        configuration.policyURL = URL(string: "https://collector.invalid/v1/policy")
        configuration.appKey = Self.appKey
        configuration.upload.countThreshold = 1
        configuration.upload.initialBackoff = 0.01
        return configuration
    }
}
