import Foundation
import NIOCore

/// The dashboard's page and its static files (`Dashboard/Page` in the package's resources), read
/// once per process and served from memory: four small files, whatever the traffic.
///
/// SwiftPM's generated `Bundle.module` traps when its bundle is neither beside the executable nor
/// in the build folder it was built in (an `nflog-collector` copied alone to a server); the
/// collector must not crash on a request for a page. So the bundle is looked up where
/// `Bundle.module` looks first, beside the executable, and a missing one is an answer that says
/// what to copy (``unavailable``), not a trap.
struct DashboardFiles: Sendable {
    /// One file as served.
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
        /// `"…"`: the first 128 bits of the SHA-256 of the bytes, as policies' ETags are.
        let etag: String
    }

    /// By name, as requested under `/dashboard/`; the page itself is `index.html`.
    private let files: [String: File]

    /// The files served and their types: nothing else under `/dashboard/` exists.
    static let served: [(name: String, contentType: String)] = [
        ("index.html", "text/html; charset=utf-8"),
        ("dashboard.css", "text/css; charset=utf-8"),
        ("charts.js", "text/javascript; charset=utf-8"),
        ("dashboard.js", "text/javascript; charset=utf-8"),
    ]

    /// The resource bundle's name, as SwiftPM names it (package_target).
    static let bundleName = "NFLogServer_NFLogCollector.resources"

    /// The page's files of this process, read at the first use.
    static let shared: Result<DashboardFiles, DashboardUnavailable> = load(from: Bundle.main.bundleURL.appendingPathComponent(bundleName))

    /// Reads the files from a resource bundle directory (its `Page` folder).
    static func load(from bundle: URL) -> Result<DashboardFiles, DashboardUnavailable> {
        let page = bundle.appendingPathComponent("Page")
        var files: [String: File] = [:]
        for (name, contentType) in served {
            guard let data = FileManager.default.contents(atPath: page.appendingPathComponent(name).path) else {
                return .failure(DashboardUnavailable(missing: page.appendingPathComponent(name).path))
            }
            files[name] = File(body: ByteBuffer(bytes: data), contentType: contentType, etag: PolicyFiles.etag(data))
        }
        return .success(DashboardFiles(files: files))
    }

    /// The file of this name, or `nil`: only the names of ``served``, so no request reaches the
    /// file system.
    func file(named name: String) -> File? { files[name] }
}

/// The dashboard's files are not where the collector looks for them.
struct DashboardUnavailable: Error, CustomStringConvertible {
    /// The file that could not be read.
    let missing: String

    var description: String {
        "the dashboard's files are not installed: \(missing) cannot be read (copy the folder \(DashboardFiles.bundleName) from the build folder next to the nflog-collector executable)"
    }
}
