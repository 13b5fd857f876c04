// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "NFLogger",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "NFLogger", targets: ["NFLogger"]),
        .executable(name: "nflog-demo", targets: ["nflog-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        // System libraries: libsqlite3 and zlib (Debian: libsqlite3-dev, zlib1g-dev).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // What the SDK and the collector share: the SQLite wrapper and gzip. Not a product.
        .target(name: "NFLogSupport", dependencies: ["CSQLite", "CZlib"]),
        .target(
            name: "NFLogger",
            dependencies: [
                "NFLogSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "nflog-demo",
            dependencies: [
                "NFLogger",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Demo"
        ),
        .testTarget(name: "NFLoggerTests", dependencies: ["NFLogger", "NFLogSupport", "CSQLite"]),
    ]
)
