// swift-tools-version: 6.1
import PackageDescription

// The SDK: what an app depends on. The collector, the demo, the benchmark and the tests that need
// a server are a second package in Server/ (Server/Package.swift), so that an app resolves none
// of the server's packages: SwiftPM resolves every package a dependency's manifest lists, used or
// not (trait-guarded dependencies are pruned only from SwiftPM 6.2 on), and this manifest's
// tools version is 6.1. `.ci/run` checks it with a scratch app (scripts/check-consumer).

/// The library targets' settings: no dependency reaches their public API unless a file says
/// `public import` (InternalImportsByDefault), every existential is spelled `any`, and a member
/// resolves only through a module its file imports (MemberImportVisibility).
let libraryFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "NFLogger",
    // The SDK's floor. NFLogger and NFLogSupport use nothing newer without an availability check,
    // and the packages they link declare no higher floor; scripts/check-platform-floor keeps it so
    // (.ci/run runs it). Nothing here is built for Apple platforms: see the README's "Platforms".
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NFLogger", targets: ["NFLogger"]),
        // For app developers' unit tests: a recording transport, no server; needs NFLogger (and NFLogSupport's gzip).
        .library(name: "NFLoggerTesting", targets: ["NFLoggerTesting"]),
        // swift-log, swift-distributed-tracing and swift-metrics as NFLogger events, apart from the
        // SDK so that an app that does not use them links none of them.
        .library(name: "NFLoggerInstrumentation", targets: ["NFLoggerInstrumentation"]),
        // The wire contract and the SQLite and gzip code the SDK and the collector share. A product
        // only so that Server/ can link it: its declarations are SPI (`@_spi(NFLogShared)`), not API.
        .library(name: "NFLogSupport", targets: ["NFLogSupport"]),
        // What both packages' test suites share (temporary directories, child processes, a held
        // SQLite write lock, completion logs, the hang limit). Not for apps: a product only so
        // that Server/'s tests can link it.
        .library(name: "NFLogTestSupport", targets: ["NFLogTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),  // LogEvent
        // NFLoggerInstrumentation's sources (built and tested with tracing 1.7.3 and metrics 2.13.0).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.9.0"),
        // The SDK's counters and flags: atomics without Synchronization's iOS 18 / macOS 15 floor.
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        // The SDK's transport on Linux is async-http-client: FoundationNetworking's URLSession spins
        // on dropped connections and cannot pin. Not linked on Apple platforms (below).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // `swift package generate-documentation --target NFLogger` (the DocC catalog; .ci/run builds it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        // System libraries: libsqlite3 and zlib (Debian: libsqlite3-dev, zlib1g-dev).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // What the SDK and the collector share: the SQLite wrapper and gzip.
        .target(name: "NFLogSupport", dependencies: ["CSQLite", "CZlib"], swiftSettings: libraryFeatures),
        .target(
            name: "NFLogger",
            dependencies: [
                "NFLogSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Atomics", package: "swift-atomics"),
                // The transport on Linux only (Upload/HTTPClientTransport.swift): on Apple
                // platforms the SDK uses URLSession, and an app must not carry a second TLS stack.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
            ],
            // The script web pages get (ScriptBridge.script): the exact file an app injects.
            resources: [.copy("Bridge/nflogger.js")],
            swiftSettings: libraryFeatures
        ),
        .target(name: "NFLoggerTesting", dependencies: ["NFLogger", "NFLogSupport"], swiftSettings: libraryFeatures),
        // Automatic sources (docs/INSTRUMENTATION.md): a LogHandler, a Tracer, a MetricsFactory.
        .target(
            name: "NFLoggerInstrumentation",
            dependencies: [
                "NFLogger",
                "NFLogSupport",  // EventNameRules: the names it makes from labels are valid ones
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: libraryFeatures
        ),
        .target(name: "NFLogTestSupport", dependencies: ["NFLogger", "NFLogSupport"], path: "Tests/NFLogTestSupport"),
        .testTarget(
            name: "NFLoggerTests",
            dependencies: [
                "NFLogger", "NFLogSupport", "NFLoggerTesting", "NFLogTestSupport", "CSQLite",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),  // SwiftLogOutputTests' captured messages
            ],
            // A self-signed certificate for 127.0.0.1 (as `nflog-collector tls-cert` makes), for the pinning tests.
            resources: [.copy("Fixtures")]
        ),
        // Only the product and the SDK, as an app's tests would have them.
        .testTarget(name: "NFLoggerTestingTests", dependencies: ["NFLoggerTesting", "NFLogger"]),
        // The SDK with a recording transport. (Hummingbird's middleware is tested in Server/.)
        .testTarget(name: "NFLoggerInstrumentationTests", dependencies: [
            "NFLoggerInstrumentation", "NFLoggerTesting", "NFLogger",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Tracing", package: "swift-distributed-tracing"),
            .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Metrics", package: "swift-metrics"),
        ]),
    ]
)
