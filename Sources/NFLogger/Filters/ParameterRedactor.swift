/// Removes or masks named parameters before anything is stored: `email`, `password`, `token`.
///
/// ```swift
/// configuration.filters = [
///     ParameterRedactor(keys: ["email", "password"]),                             // removed
///     ParameterRedactor(name: "mask-phone", keys: ["phone"], replacement: .replace(with: "***")),
/// ]
/// ```
///
/// Keys are compared without regard to case (`Email` is `email`), at any depth: a key
/// inside a nested object, or in an object inside an array, is redacted too. The value never
/// reaches the database file: redaction runs on the logger's queue before the parameters are
/// encoded.
///
/// Span ends carry the span's id, not its name, so a redactor cannot tell which pattern they
/// match: it redacts the parameters of **every** span end
/// (``SpanHandle/end(parameters:completion:)``, ``NFLogger/endEvent(id:parameters:completion:)``),
/// whatever its pattern. Redacting too much is the safe side of that choice.
public struct ParameterRedactor: EventFilter {
    /// What becomes of a redacted parameter.
    public enum Replacement: Sendable, Equatable {
        /// The key and its value are removed.
        case remove
        /// The value is replaced by this string; the key stays, so the event still shows that
        /// there was one.
        case replace(with: String)
    }

    public let name: String
    public let pattern: String
    /// The keys redacted, as given.
    public let keys: Set<String>
    public let replacement: Replacement
    /// `keys`, lowercased: what a parameter's lowercased key is looked up in.
    private let folded: Set<String>

    /// - Parameters:
    ///   - name: Names the filter in statuses. Default: `redactor`.
    ///   - pattern: The events whose start parameters it redacts. Default: `**`, every event.
    ///     Span ends are redacted whatever the pattern.
    ///   - keys: The parameter keys to redact, at any depth, compared without regard to case.
    ///   - replacement: Remove them, or replace their values. Default: ``Replacement/remove``.
    public init(name: String = "redactor", pattern: String = "**", keys: Set<String>, replacement: Replacement = .remove) {
        self.name = name
        self.pattern = pattern
        self.keys = keys
        self.replacement = replacement
        folded = Set(keys.map { $0.lowercased() })
    }

    public func apply(_ event: FilteredEvent) -> [FilteredEvent] {
        var event = event
        event.parameters = redact(event.parameters)
        return [event]
    }

    /// The parameters with every named key redacted, at any depth.
    func redact(_ parameters: LogParameters) -> LogParameters {
        guard !folded.isEmpty, !parameters.isEmpty else { return parameters }
        var result = parameters
        for (key, value) in parameters {
            if isRedacted(key) {
                switch replacement {
                case .remove: result[key] = nil
                case .replace(let text): result[key] = text
                }
            } else if !Self.isScalar(value) {
                let redacted = redact(value.logValue, depth: 2)
                if redacted.changed { result[key] = redacted.value }
            }
        }
        return result
    }

    private func isRedacted(_ key: String) -> Bool {
        folded.contains(key) || folded.contains(key.lowercased())
    }

    /// The common scalar types, which hold no keys: skipped without building their ``LogValue``.
    private static func isScalar(_ value: any LogValueConvertible) -> Bool {
        value is String || value is Int || value is Double || value is Bool || value is Int64
    }

    /// Deeper than the encoder accepts (``ParameterEncoder/maxDepth``), nothing is looked at:
    /// the event fails to encode anyway, and the recursion stays bounded.
    private func redact(_ value: LogValue, depth: Int) -> (value: LogValue, changed: Bool) {
        guard depth <= ParameterEncoder.maxDepth + 1 else { return (value, false) }
        switch value {
        case .object(let members):
            var result = members
            var changed = false
            for (key, member) in members {
                if isRedacted(key) {
                    changed = true
                    switch replacement {
                    case .remove: result[key] = nil
                    case .replace(let text): result[key] = .string(text)
                    }
                } else {
                    let inner = redact(member, depth: depth + 1)
                    if inner.changed { result[key] = inner.value; changed = true }
                }
            }
            return (.object(result), changed)
        case .array(let elements):
            var result = elements
            var changed = false
            for index in elements.indices {
                let inner = redact(elements[index], depth: depth + 1)
                if inner.changed { result[index] = inner.value; changed = true }
            }
            return (.array(result), changed)
        case .string, .integer, .double, .bool, .null:
            return (value, false)
        }
    }
}
