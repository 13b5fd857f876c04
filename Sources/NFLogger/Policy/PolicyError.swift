public import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Why a policy document was refused: it came, but is not one this SDK may apply. The last good
/// policy stays in force. Something for whoever writes the policy to fix; an app can only report
/// it. (Why no policy came at all is a ``PolicyFetchError``.)
///
/// New cases may come in any minor release (see <doc:SourceStability>): a `switch` over it
/// needs a `default`.
public enum PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The document is not a JSON object.
    case invalidJSON(String)
    /// A field is missing, of the wrong type, or out of range; `field` is its path (`rules.sampling[1].rate`).
    case invalidField(String, reason: String)
    /// The document has a field this SDK does not know (often a typo).
    case unknownField(String)
    /// `version` is not one this SDK reads.
    case unsupportedVersion(Int)
    /// `mode` is not disabled, active or specific.
    case unknownMode(String)
    /// A tag pattern in the rules is invalid.
    case invalidPattern(field: String, TagPatternError)
    /// The document is larger than 64 KiB.
    case tooLarge(bytes: Int)
    /// `expires_at` has passed.
    case expired(Date)
    /// A signing key is configured but the response carried no signature.
    case unsigned
    /// The signature does not verify with the configured key.
    case badSignature

    public var description: String {
        switch self {
        case .unsigned: "the policy is not signed, and a signing key is configured"
        case .badSignature: "the policy's signature does not verify"
        default: documentError.map(\.description) ?? ""
        }
    }

    /// The parser's error, case for case (the signature's two cases are the SDK's own).
    init(_ error: PolicyDocumentError) {
        switch error {
        case .invalidJSON(let reason): self = .invalidJSON(reason)
        case .invalidField(let field, let reason): self = .invalidField(field, reason: reason)
        case .unknownField(let field): self = .unknownField(field)
        case .unsupportedVersion(let version): self = .unsupportedVersion(version)
        case .unknownMode(let mode): self = .unknownMode(mode)
        case .invalidPattern(let field, let error): self = .invalidPattern(field: field, TagPatternError(error))
        case .tooLarge(let bytes): self = .tooLarge(bytes: bytes)
        case .expired(let date): self = .expired(date)
        }
    }

    /// The parser's error this one came from; `nil` for the signature's cases.
    private var documentError: PolicyDocumentError? {
        switch self {
        case .invalidJSON(let reason): .invalidJSON(reason)
        case .invalidField(let field, let reason): .invalidField(field, reason: reason)
        case .unknownField(let field): .unknownField(field)
        case .unsupportedVersion(let version): .unsupportedVersion(version)
        case .unknownMode(let mode): .unknownMode(mode)
        case .invalidPattern(let field, let error): .invalidPattern(field: field, PatternError(pattern: error.pattern, reason: error.reason))
        case .tooLarge(let bytes): .tooLarge(bytes: bytes)
        case .expired(let date): .expired(date)
        case .unsigned, .badSignature: nil
        }
    }
}
