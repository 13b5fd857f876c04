import Foundation
@_spi(NFLogShared) import NFLogSupport

/// A reply to a page (docs/BRIDGE.md), written as JSON.
struct BridgeReply: Sendable {
    let json: Data

    init(id: Int64?, status: LogStatus) {
        var out = Self.start(id)
        switch status {
        case .recorded(let event):
            out.writeLiteral(","); out.writeKey("status"); out.writeString("recorded")
            out.writeLiteral(","); out.writeKey("event"); out.writeUUID(event)
            if status.isAggregated { out.writeLiteral(","); out.writeKey("aggregated"); out.writeLiteral("true") }
        case .filtered(let reason):
            out.writeLiteral(","); out.writeKey("status"); out.writeString("filtered")
            out.writeLiteral(","); out.writeKey("reason"); out.writeString(Self.code(reason))
        case .disabled:
            out.writeLiteral(","); out.writeKey("status"); out.writeString("disabled")
        case .failed(let error):
            Self.writeFailure(&out, code: Self.code(error), message: error.description)
        }
        json = Self.finish(&out)
    }

    init(id: Int64?, failure: BridgeFailure) {
        var out = Self.start(id)
        switch failure {
        case .malformed(let why): Self.writeFailure(&out, code: "malformed", message: why)
        case .originNotAllowed(let origin):
            Self.writeFailure(&out, code: "originNotAllowed", message: "the page's origin \(origin.prefix(256)) is not in the app's allowed origins")
        case .rateLimited: Self.writeFailure(&out, code: "rateLimited", message: "the page sent more messages than its rate allows")
        case .unknownCall(let call): Self.writeFailure(&out, code: "unknownCall", message: "no call is named \(call.prefix(64))")
        case .invalid(let field, let why): Self.writeFailure(&out, code: "invalidMessage", message: "\(field.prefix(64)) \(why)")
        case .parameters(let error): Self.writeFailure(&out, code: Self.code(error), message: error.description)
        }
        json = Self.finish(&out)
    }

    init(id: Int64?, flushed result: FlushResult) {
        var out = Self.start(id)
        if let error = result.error {
            Self.writeFailure(&out, code: "upload", message: "\(error)")
        } else {
            out.writeLiteral(","); out.writeKey("status"); out.writeString("flushed")
        }
        out.writeLiteral(","); out.writeKey("uploaded"); out.writeInteger(Int64(result.uploadedEvents))
        out.writeLiteral(","); out.writeKey("remaining"); out.writeInteger(Int64(result.remainingEvents))
        json = Self.finish(&out)
    }

    private static func start(_ id: Int64?) -> JSONWriter {
        var out = JSONWriter(capacity: 160, maxBytes: .max)
        out.writeLiteral("{"); out.writeKey("id")
        if let id { out.writeInteger(id) } else { out.writeLiteral("null") }
        return out
    }

    private static func finish(_ out: inout JSONWriter) -> Data {
        out.writeLiteral("}")
        return Data(out.bytes)
    }

    private static func writeFailure(_ out: inout JSONWriter, code: String, message: String) {
        out.writeLiteral(","); out.writeKey("status"); out.writeString("failed")
        out.writeLiteral(","); out.writeKey("error"); out.writeLiteral("{")
        out.writeKey("code"); out.writeString(code)
        out.writeLiteral(","); out.writeKey("message"); out.writeString(String(message.prefix(512)))
        out.writeLiteral("}")
    }

    static func code(_ reason: FilterReason) -> String {
        switch reason {
        case .notSelected: "notSelected"
        case .denied: "denied"
        case .sampledOut: "sampledOut"
        case .insidePrivacyZone: "insidePrivacyZone"
        case .sdkBelowMinimumVersion: "sdkBelowMinimumVersion"
        case .consentDenied: "consentDenied"
        case .noOutput: "noOutput"
        case .droppedByFilter: "droppedByFilter"
        }
    }

    static func code(_ error: NFLoggerError) -> String {
        switch error {
        case .invalidName: "invalidName"
        case .invalidType: "invalidType"
        case .invalidParameter: "invalidParameter"
        case .parametersTooLarge: "parametersTooLarge"
        case .backpressure: "backpressure"
        case .storage: "storage"
        case .unknownSpan: "unknownSpan"
        case .spanAlreadyEnded: "spanAlreadyEnded"
        case .transactionEnded: "transactionEnded"
        case .closed: "closed"
        case .filterFailed: "filterFailed"
        }
    }
}
