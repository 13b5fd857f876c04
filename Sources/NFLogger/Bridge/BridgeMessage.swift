import Foundation
@_spi(NFLogShared) import NFLogSupport

/// One message from a page, checked field by field (docs/BRIDGE.md): a known call with exactly
/// the fields it takes, each of the right type. Parameters are checked as a native call's are.
struct BridgeMessage {
    enum Call {
        case logEvent(name: String, type: String, parameters: LogParameters, transaction: UUID?)
        case startEvent(name: String, type: String, parameters: LogParameters, transaction: UUID?)
        case endEvent(span: UUID, parameters: LogParameters)
        case beginTransaction(name: String, type: String, parameters: LogParameters)
        case endTransaction(transaction: UUID, outcome: TransactionOutcome)
        case flush
    }

    let id: Int64
    let call: Call

    private static let common: Set<String> = ["v", "id", "call"]
    private static let fields: [String: Set<String>] = [
        "logEvent": ["name", "type", "parameters", "transaction"],
        "startEvent": ["name", "type", "parameters", "transaction"],
        "endEvent": ["span", "parameters"],
        "beginTransaction": ["name", "type", "parameters"],
        "endTransaction": ["transaction", "outcome", "reason"],
        "flush": [],
    ]

    init(_ object: [String: Any]) throws(BridgeFailure) {
        guard let version = object["v"] as? NSNumber, !Self.isBoolean(version), version.intValue == 1, version.doubleValue == 1 else {
            throw .invalid("v", "must be 1")
        }
        guard let number = object["id"] as? NSNumber, !Self.isBoolean(number), let id = Int64(exactly: number.doubleValue),
              (0...(1 << 53 - 1)).contains(id) else {
            throw .invalid("id", "must be an integer from 0 to 2^53 - 1")
        }
        self.id = id
        guard let call = object["call"] as? String else { throw .invalid("call", "must be a string") }
        guard let allowed = Self.fields[call] else { throw .unknownCall(call) }
        if let unknown = object.keys.sorted().first(where: { !Self.common.contains($0) && !allowed.contains($0) }) {
            throw .invalid(unknown, "is not a field of \(call)")
        }
        switch call {
        case "logEvent":
            self.call = .logEvent(name: try Self.string(object, "name"), type: try Self.string(object, "type", default: "event"),
                                  parameters: try Self.parameters(object), transaction: try Self.uuid(object, "transaction", required: false))
        case "startEvent":
            self.call = .startEvent(name: try Self.string(object, "name"), type: try Self.string(object, "type", default: "event"),
                                    parameters: try Self.parameters(object), transaction: try Self.uuid(object, "transaction", required: false))
        case "endEvent":
            guard let span = try Self.uuid(object, "span", required: true) else { throw .invalid("span", "is required") }
            self.call = .endEvent(span: span, parameters: try Self.parameters(object))
        case "beginTransaction":
            self.call = .beginTransaction(name: try Self.string(object, "name"), type: try Self.string(object, "type", default: "usecase"),
                                          parameters: try Self.parameters(object))
        case "endTransaction":
            guard let transaction = try Self.uuid(object, "transaction", required: true) else { throw .invalid("transaction", "is required") }
            let reason = try Self.optionalString(object, "reason")
            if let reason, reason.utf8.count > 1_024 { throw .invalid("reason", "must be at most 1024 bytes") }
            let outcome: TransactionOutcome
            switch try Self.string(object, "outcome") {
            case "completed":
                guard reason == nil else { throw .invalid("reason", "is not given with completed") }
                outcome = .completed
            case "cancelled": outcome = .cancelled(reason: reason)
            case "failed":
                guard let reason else { throw .invalid("reason", "is required with failed") }
                outcome = .failed(reason: reason)
            default: throw .invalid("outcome", "must be completed, cancelled or failed")
            }
            self.call = .endTransaction(transaction: transaction, outcome: outcome)
        default:
            self.call = .flush
        }
    }

    /// JSONSerialization gives booleans as NSNumbers too.
    private static func isBoolean(_ number: NSNumber) -> Bool { type(of: number) == NSNumber.booleanClass }

    private static func string(_ object: [String: Any], _ key: String, default fallback: String? = nil) throws(BridgeFailure) -> String {
        guard let value = object[key] else {
            if let fallback { return fallback }
            throw .invalid(key, "is required")
        }
        guard let string = value as? String else { throw .invalid(key, "must be a string") }
        return string
    }

    private static func optionalString(_ object: [String: Any], _ key: String) throws(BridgeFailure) -> String? {
        guard let value = object[key] else { return nil }
        guard let string = value as? String else { throw .invalid(key, "must be a string") }
        return string
    }

    private static func uuid(_ object: [String: Any], _ key: String, required: Bool) throws(BridgeFailure) -> UUID? {
        guard let value = object[key] else {
            if required { throw .invalid(key, "is required") }
            return nil
        }
        guard let text = value as? String, let uuid = UUID(uuidString: text) else { throw .invalid(key, "must be a UUID") }
        return uuid
    }

    private static func parameters(_ object: [String: Any]) throws(BridgeFailure) -> LogParameters {
        guard let value = object["parameters"] else { return [:] }
        guard let dictionary = value as? [String: Any] else { throw .invalid("parameters", "must be an object") }
        do { return try LogParameters(jsonObject: dictionary) } catch { throw .parameters(error) }
    }
}

/// Why a message was refused before it reached the logger.
enum BridgeFailure: Error {
    case malformed(String)
    case originNotAllowed(String)
    case rateLimited
    case unknownCall(String)
    case invalid(String, String)
    /// A parameter the SDK refuses, as it would refuse it from a native call.
    case parameters(NFLoggerError)
}
