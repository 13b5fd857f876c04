public import Foundation

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
        case .invalidJSON(let reason): "the policy is not valid JSON: \(reason)"
        case .invalidField(let field, let reason): "policy field \"\(field)\" \(reason)"
        case .unknownField(let field): "the policy has an unknown field \"\(field)\""
        case .unsupportedVersion(let version): "policy version \(version) is not supported (this SDK reads version \(Policy.supportedVersion))"
        case .unknownMode(let mode): "unknown policy mode \"\(mode)\" (disabled, active or specific)"
        case .invalidPattern(let field, let error): "policy field \"\(field)\": \(error)"
        case .tooLarge(let bytes): "the policy is \(bytes) bytes; the limit is \(Policy.maxBytes)"
        case .expired(let date): "the policy expired at \(Policy.format(date))"
        case .unsigned: "the policy is not signed, and a signing key is configured"
        case .badSignature: "the policy's signature does not verify"
        }
    }
}
