/// Why a configuration was rejected. Every case names the file or the field to fix.
///
/// New cases may come in any minor release (see <doc:SourceStability>): a `switch` over it
/// needs a `default`.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// There is no file at this path.
    case fileNotFound(path: String)
    /// The file exists but could not be read.
    case unreadableFile(path: String, reason: String)
    /// The file is not a JSON object.
    case invalidJSON(path: String, reason: String)
    /// A required field is absent.
    case missingField(String)
    /// A field has the wrong type or an unusable value.
    case invalidField(String, reason: String)
    /// The file has a field this SDK does not know (often a typo).
    case unknownField(String)

    public var description: String {
        switch self {
        case .fileNotFound(let path): "no configuration file at \(path)"
        case .unreadableFile(let path, let reason): "cannot read the configuration file \(path): \(reason)"
        case .invalidJSON(let path, let reason): "the configuration file \(path) is not a valid JSON object: \(reason)"
        case .missingField(let field): "the configuration has no \"\(field)\", which is required"
        case .invalidField(let field, let reason): "the configuration field \"\(field)\" \(reason)"
        case .unknownField(let field): "the configuration has an unknown field \"\(field)\""
        }
    }
}
