// swift-tools-version: 6.1
// libFuzzer targets for the code that reads hostile input: the collector's batch decoder (and
// the JSON parser under it), the SDK's policy parser, and the collector's gzip inflater.
// Build and run them with scripts/fuzz, which builds with libFuzzer and AddressSanitizer
// (so the project's code is coverage-instrumented too); a plain `swift build` here is not useful.
import PackageDescription

// No Swift `main`: libFuzzer's runtime supplies it and calls LLVMFuzzerTestOneInput.
let fuzzTarget: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "NFLoggerFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "NFLogger", path: ".."), .package(name: "NFLogServer", path: "../Server")],
    targets: [
        .executableTarget(
            name: "FuzzBatchDecoder",
            dependencies: [.product(name: "NFLogCollector", package: "NFLogServer")],
            swiftSettings: fuzzTarget
        ),
        .executableTarget(
            name: "FuzzPolicyParser",
            dependencies: [.product(name: "NFLogger", package: "NFLogger")],
            swiftSettings: fuzzTarget
        ),
        .executableTarget(
            name: "FuzzGzip",
            dependencies: [.product(name: "NFLogSupport", package: "NFLogger")],
            swiftSettings: fuzzTarget
        ),
    ]
)
