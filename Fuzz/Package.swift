// swift-tools-version: 6.1
// libFuzzer targets for the code that reads hostile input: the batch decoder the collector uses
// (NFLogSupport's, and the JSON parser under it), the SDK's policy parser, and the collector's gzip inflater.
// Build and run them with scripts/fuzz, which builds with libFuzzer and AddressSanitizer
// (so the project's code is coverage-instrumented too); a plain `swift build` here is not useful.
import PackageDescription

// No Swift `main`: libFuzzer's runtime supplies it and calls LLVMFuzzerTestOneInput.
let fuzzTarget: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "NFLoggerFuzz",
    platforms: [.macOS(.v15)],
    // Only the SDK's package: the batch decoder and its JSON parser are NFLogSupport's (the wire
    // contract both ends share), so no server dependency is built with the fuzzer's flags.
    dependencies: [.package(name: "NFLogger", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzBatchDecoder",
            dependencies: [.product(name: "NFLogSupport", package: "NFLogger")],
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
