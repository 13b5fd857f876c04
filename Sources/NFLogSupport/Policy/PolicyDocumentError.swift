public import Foundation

/// Why a policy document was refused, as the parser finds it. The SDK reports it as its public
/// `PolicyError`; the collector as the reason it will not serve a policy file.
@_spi(NFLogShared) public enum PolicyDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidJSON(String)
    /// `field` is the full path (`rules.sampling[1].rate`).
    case invalidField(String, reason: String)
    case unknownField(String)
    case unsupportedVersion(Int)
    case unknownMode(String)
    case invalidPattern(field: String, PatternError)
    case tooLarge(bytes: Int)
    case expired(Date)

    @_spi(NFLogShared) public var description: String {
        switch self {
        case .invalidJSON(let reason): "the policy is not valid JSON: \(reason)"
        case .invalidField(let field, let reason): "policy field \"\(field)\" \(reason)"
        case .unknownField(let field): "the policy has an unknown field \"\(field)\""
        case .unsupportedVersion(let version): "policy version \(version) is not supported (this SDK reads version \(PolicyDocument.supportedVersion))"
        case .unknownMode(let mode): "unknown policy mode \"\(mode)\" (disabled, active or specific)"
        case .invalidPattern(let field, let error): "policy field \"\(field)\": invalid tag pattern \"\(error.pattern)\": \(error.reason)"
        case .tooLarge(let bytes): "the policy is \(bytes) bytes; the limit is \(PolicyDocument.maxBytes)"
        case .expired(let date): "the policy expired at \(PolicyDocument.format(date))"
        }
    }
}

extension PolicyDocumentError {
    static func missing(_ field: String) -> PolicyDocumentError { .invalidField(field, reason: "is required") }
    static func invalid(_ field: String, _ reason: String) -> PolicyDocumentError { .invalidField(field, reason: reason) }

    /// What the shared field reader found, as this error.
    init(_ problem: FieldProblem) {
        switch problem {
        case .missing(let field): self = .missing(field)
        case .invalid(let field, let reason): self = .invalidField(field, reason: reason)
        case .unknown(let field): self = .unknownField(field)
        }
    }
}
