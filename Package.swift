// swift-tools-version: 6.1
import PackageDescription

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
    // and the packages they link (swift-log, swift-crypto, swift-atomics) declare no higher floor;
    // scripts/check-platform-floor keeps it so (.ci/run runs it). Nothing here is built for Apple
    // platforms: see the README's "Platforms".
    //
    // SwiftPM has no per-target platforms, so the collector, the executables and the tests get this
    // floor too. They are built and run on Linux, where SwiftPM compares no platform versions. On a
    // Mac they do not build with this manifest: SwiftPM refuses NFLogCollector's HummingbirdAuth
    // (macOS 14, iOS 17, tvOS 17), and the collector's code uses Duration, Clock and Mutex (macOS 13
    // and 15) without availability checks. An app that depends on the NFLogger product alone should
    // meet neither (SwiftPM fetches only what the products in use need): expected, not verified.
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NFLogger", targets: ["NFLogger"]),
        .library(name: "NFLogCollector", targets: ["NFLogCollector"]),
        .executable(name: "nflog-collector", targets: ["nflog-collector"]),
        // For app developers' unit tests: a recording transport, no server; needs NFLogger only.
        .library(name: "NFLoggerTesting", targets: ["NFLoggerTesting"]),
        // For integration tests: a real collector in-process on loopback.
        .library(name: "NFLogCollectorTesting", targets: ["NFLogCollectorTesting"]),
        // swift-log, swift-distributed-tracing and swift-metrics as NFLogger events, apart from the
        // SDK so that an app that does not use them links none of them.
        .library(name: "NFLoggerInstrumentation", targets: ["NFLoggerInstrumentation"]),
        // A server's middleware: requests as server spans in the transaction of their traceparent.
        // Apart from the instrumentation so that an app never links Hummingbird.
        .library(name: "NFLoggerHummingbird", targets: ["NFLoggerHummingbird"]),
        .executable(name: "nflog-demo", targets: ["nflog-demo"]),
        .executable(name: "nflog-bench", targets: ["nflog-bench"]),
        .executable(name: "nflog-fault-proxy", targets: ["nflog-fault-proxy"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),  // LogEvent
        // NFLoggerInstrumentation's sources (Hummingbird brings both already; built and tested
        // with tracing 1.7.3 and metrics 2.13.0).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.9.0"),
        // The SDK's counters and flags: atomics without Synchronization's iOS 18 / macOS 15 floor.
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // The collector's credentials as middleware that puts the identity in the request context.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        // TLS: the collector serves HTTPS. The SDK's transport on Linux is async-http-client:
        // FoundationNetworking's URLSession spins on dropped connections and cannot pin.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        // Hummingbird's own HTTP layer, named for the collector's channel handlers (100-continue).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // `swift package generate-documentation --target NFLogger` (the DocC catalog; .ci/run builds it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // The collector's PostgreSQL store (Storage/Postgres): a pooled client, no libpq.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // System libraries: libsqlite3 and zlib (Debian: libsqlite3-dev, zlib1g-dev).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // What the SDK and the collector share: the SQLite wrapper and gzip. Not a product.
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
        // The collector as a library (routes, storage, reports), so tests can run it in-process.
        .target(
            name: "NFLogCollector",
            dependencies: [
                "NFLogSupport",
                // The policies it serves are checked by the SDK's own parser: what devices refuse is
                // never served.
                "NFLogger",
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
        .target(
            name: "NFLoggerHummingbird",
            dependencies: [
                "NFLogger",
                "NFLoggerInstrumentation",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: libraryFeatures
        ),
        // Its exported events are NFLoggerTesting's typed RecordedEvents.
        .target(name: "NFLogCollectorTesting", dependencies: [
            "NFLogCollector", "NFLoggerTesting", "NFLogSupport", .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: libraryFeatures),
        .executableTarget(
            name: "nflog-demo",
            dependencies: [
                "NFLogger",
                "NFLogCollector",
                "NFLogSupport",
                "NFLoggerHummingbird",  // the demo's backend
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
                "NFLogger", "NFLogCollectorTesting", "NFLogCollector", "NFLogSupport", "FaultProxy", "NFLoggerInstrumentation",
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
        .executableTarget(name: "nflog-count-calls", dependencies: ["NFLogger"], path: "Benchmarks/CountCalls"),
        // A reverse proxy that breaks connections on real sockets, for the fault tests and the
        // benchmark's faults phase; `nflog-fault-proxy` puts it in front of any collector.
        .target(
            name: "FaultProxy",
            dependencies: [
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
            dependencies: ["NFLogger", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tests/CrashChild"
        ),
        // The collector's tests' stores: `StoreKind.all` (SQLite, and PostgreSQL when
        // NFLOG_POSTGRES_URL is set), a fresh store or collector of either kind, fresh databases.
        .target(
            name: "CollectorTestSupport",
            dependencies: [
                "NFLogCollector", "NFLogCollectorTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/CollectorTestSupport"
        ),
        .testTarget(name: "NFLoggerTests", dependencies: [
            "NFLogger", "NFLogSupport", "CSQLite", "NFLogCollector", .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),  // SwiftLogOutputTests' capturing handler
        ]),
        .testTarget(name: "NFLogCollectorTests", dependencies: [
            "NFLogCollector", "NFLogCollectorTesting", "NFLogger", "NFLogSupport", "CollectorTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "PostgresNIO", package: "postgres-nio"),  // PostgresEventStoreTests' migrations
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "EndToEndTests", dependencies: [
            "NFLogger", "NFLogCollectorTesting", "NFLogCollector", "NFLogSupport", "nflog-crash-child", "FaultProxy", "nflog-fault-proxy", "nflog-collector",
            "nflog-demo",  // DashboardTests fill a collector with it, and run it with --keep-running
            "CollectorTestSupport",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),  // UncheckedPolicyServer
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Only the product and the SDK, as an app's tests would have them.
        .testTarget(name: "NFLoggerTestingTests", dependencies: ["NFLoggerTesting", "NFLogger"]),
        // Real components: the SDK with a recording transport, Hummingbird on loopback, AsyncHTTPClient.
        .testTarget(name: "NFLoggerInstrumentationTests", dependencies: [
            "NFLoggerInstrumentation", "NFLoggerHummingbird", "NFLoggerTesting", "NFLogger",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Tracing", package: "swift-distributed-tracing"),
            .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
    ]
)
