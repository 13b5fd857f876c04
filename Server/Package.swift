// swift-tools-version: 6.1
import PackageDescription

// The collector and everything that needs a server: the collector as a library and as
// `nflog-collector`, its testing product, the Hummingbird middleware, the demo (an app, its
// backend and an embedded collector), the benchmark, the fault proxy, and the tests that run them.
// A package of its own so that an app depending on the SDK (the package one folder up) resolves
// none of these packages. Its products are reached by path (`.package(path: "…/Server")`):
// SwiftPM reads a package from a repository's root only.

/// The library targets' settings, as in the SDK's manifest.
let libraryFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "NFLogServer",
    // Built and run on Linux. On a Mac: HummingbirdAuth needs macOS 14, and the collector's code
    // uses Duration, Clock and Mutex (macOS 13 and 15) without availability checks.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NFLogCollector", targets: ["NFLogCollector"]),
        .executable(name: "nflog-collector", targets: ["nflog-collector"]),
        // For integration tests: a real collector in-process on loopback.
        .library(name: "NFLogCollectorTesting", targets: ["NFLogCollectorTesting"]),
        // A server's middleware: requests as server spans in the transaction of their traceparent.
        .library(name: "NFLoggerHummingbird", targets: ["NFLoggerHummingbird"]),
        .executable(name: "nflog-demo", targets: ["nflog-demo"]),
        .executable(name: "nflog-bench", targets: ["nflog-bench"]),
        .executable(name: "nflog-fault-proxy", targets: ["nflog-fault-proxy"]),
    ],
    dependencies: [
        // The SDK: NFLogger, NFLoggerInstrumentation, NFLoggerTesting and the shared NFLogSupport.
        .package(name: "NFLogger", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.9.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // The collector's credentials as middleware that puts the identity in the request context.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        // TLS: the collector serves HTTPS.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        // Hummingbird's own HTTP layer, named for the collector's channel handlers (100-continue).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The collector's PostgreSQL store (Storage/Postgres): a pooled client, no libpq.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // The collector as a library (routes, storage, reports), so tests can run it in-process.
        .target(
            name: "NFLogCollector",
            dependencies: [
                // The wire contract (policy documents are checked by the parser the SDK uses: what
                // devices refuse is never served), gzip, SQLite. Never the SDK itself:
                // scripts/check-dependencies fails CI if NFLogCollector comes to link NFLogger.
                .product(name: "NFLogSupport", package: "NFLogger"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // The dashboard's page, script and style (Dashboard/DashboardFiles.swift serves them).
            resources: [.copy("Dashboard/Page")],
            swiftSettings: libraryFeatures
        ),
        .executableTarget(
            name: "nflog-collector",
            dependencies: [
                "NFLogCollector",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "NFLoggerHummingbird",
            dependencies: [
                .product(name: "NFLogger", package: "NFLogger"),
                .product(name: "NFLoggerInstrumentation", package: "NFLogger"),
                .product(name: "NFLogSupport", package: "NFLogger"),  // the policy's `auto` switches
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: libraryFeatures
        ),
        // Its exported events are NFLoggerTesting's typed RecordedEvents.
        .target(name: "NFLogCollectorTesting", dependencies: [
            "NFLogCollector",
            .product(name: "NFLoggerTesting", package: "NFLogger"),
            .product(name: "NFLogSupport", package: "NFLogger"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: libraryFeatures),
        .executableTarget(
            name: "nflog-demo",
            dependencies: [
                "NFLogCollector",
                "NFLoggerHummingbird",  // the demo's backend
                .product(name: "NFLogger", package: "NFLogger"),
                .product(name: "NFLogSupport", package: "NFLogger"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),  // --keep-running
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Demo"
        ),
        // The benchmark: scripts/bench builds it in release mode and runs it.
        .executableTarget(
            name: "nflog-bench",
            dependencies: [
                "NFLogCollectorTesting", "NFLogCollector", "FaultProxy",
                .product(name: "NFLogger", package: "NFLogger"),
                .product(name: "NFLogSupport", package: "NFLogger"),
                .product(name: "NFLoggerInstrumentation", package: "NFLogger"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),  // the postgres phase's fresh databases
            ],
            path: "Benchmarks",
            exclude: ["CountCalls"]
        ),
        // Log calls for callgrind to count (scripts/bench runs it through nflog-bench).
        .executableTarget(
            name: "nflog-count-calls",
            dependencies: [.product(name: "NFLogger", package: "NFLogger"), .product(name: "NFLogSupport", package: "NFLogger")],
            path: "Benchmarks/CountCalls"
        ),
        // A reverse proxy that breaks connections on real sockets, for the fault tests and the
        // benchmark's faults phase; `nflog-fault-proxy` puts it in front of any collector.
        .target(
            name: "FaultProxy",
            dependencies: [
                .product(name: "NFLogSupport", package: "NFLogger"),  // SeededRandom
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/FaultProxy"
        ),
        .executableTarget(
            name: "nflog-fault-proxy",
            dependencies: ["FaultProxy", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tests/FaultProxyCommand"
        ),
        // Spawned by the durability and fault tests (kill -9, a full disk, a million events
        // offline, delivery costs) and the benchmark's faults phase.
        .executableTarget(
            name: "nflog-crash-child",
            dependencies: [
                .product(name: "NFLogger", package: "NFLogger"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/CrashChild"
        ),
        // The collector's tests' stores: `StoreKind.all` (SQLite, and PostgreSQL when
        // NFLOG_POSTGRES_URL is set), a fresh store or collector of either kind, fresh databases.
        .target(
            name: "CollectorTestSupport",
            dependencies: [
                "NFLogCollector", "NFLogCollectorTesting",
                // Re-exported: what both packages' suites share (child processes, temporary
                // directories, the hang limit, a held SQLite write lock, completion logs).
                .product(name: "NFLogTestSupport", package: "NFLogger"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/CollectorTestSupport"
        ),
        .testTarget(name: "NFLogCollectorTests", dependencies: [
            "NFLogCollector", "NFLogCollectorTesting", "CollectorTestSupport",
            .product(name: "NFLogger", package: "NFLogger"),
            .product(name: "NFLogSupport", package: "NFLogger"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "InMemoryLogging", package: "swift-log"),
            .product(name: "PostgresNIO", package: "postgres-nio"),  // PostgresEventStoreTests' migrations
            .product(name: "Crypto", package: "swift-crypto"),
            // BodyRateWindowTests: the connection handler on an EmbeddedChannel, its clock moved by hand.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
        .testTarget(name: "EndToEndTests", dependencies: [
            "NFLogCollectorTesting", "NFLogCollector", "nflog-crash-child", "FaultProxy", "nflog-fault-proxy", "nflog-collector",
            "nflog-demo",  // DashboardTests fill a collector with it, and run it with --keep-running
            "CollectorTestSupport",
            .product(name: "NFLogTestSupport", package: "NFLogger"),
            .product(name: "NFLogger", package: "NFLogger"),
            .product(name: "NFLogSupport", package: "NFLogger"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "InMemoryLogging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),  // UncheckedPolicyServer
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Real components: the SDK with a recording transport, Hummingbird on loopback, AsyncHTTPClient.
        .testTarget(name: "NFLoggerHummingbirdTests", dependencies: [
            "NFLoggerHummingbird",
            .product(name: "NFLogger", package: "NFLogger"),
            .product(name: "NFLoggerInstrumentation", package: "NFLogger"),
            .product(name: "NFLoggerTesting", package: "NFLogger"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Tracing", package: "swift-distributed-tracing"),
            .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
    ]
)
