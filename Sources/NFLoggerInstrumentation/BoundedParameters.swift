import NFLogger

/// Parameters built from values the SDK does not control (a record's metadata, a span's
/// attributes), kept within bounds so that a chatty library never makes an event the SDK refuses
/// (a key over 256 bytes, a non-finite number, more than `Configuration.Limits.maxParametersBytes`)
/// nor a large one: at most ``maxKeys`` added keys, keys cut at ``maxKeyBytes``, strings cut at
/// ``maxValueBytes``, and at most ``maxTotalBytes`` of added strings. What does not fit is left
/// out, and the event says so with `truncated: true`.
struct BoundedParameters {
    static let maxKeys = 32
    static let maxKeyBytes = 128
    static let maxValueBytes = 1_024
    static let maxTotalBytes = 16 * 1_024

    private(set) var parameters: LogParameters
    /// The keys the caller set itself (``init(fixed:)``): an added key equal to one of them is
    /// renamed with `collisionPrefix`, never overwrites it.
    private let fixedKeys: Set<String>
    private let collisionPrefix: String
    private var added = 0
    private var bytes = 0
    private var truncated = false

    init(fixed: LogParameters = [:], collisionPrefix: String) {
        parameters = fixed
        fixedKeys = Set(fixed.map(\.key))
        self.collisionPrefix = collisionPrefix
    }

    /// The parameters, with `truncated: true` if anything was cut or left out.
    var result: LogParameters {
        guard truncated else { return parameters }
        var result = parameters
        result["truncated"] = true
        return result
    }

    /// Whether another key would be accepted: callers with many stop early.
    var isFull: Bool { added >= Self.maxKeys || bytes >= Self.maxTotalBytes }

    mutating func add(_ key: String, string value: String) {
        let cut = Self.cut(value, to: Self.maxValueBytes)
        guard let key = admit(key, bytes: cut.utf8.count) else { return }
        if cut.utf8.count < value.utf8.count { truncated = true }
        parameters[key] = cut
    }

    mutating func add(_ key: String, integer value: Int64) {
        guard let key = admit(key, bytes: 8) else { return }
        parameters[key] = value
    }

    mutating func add(_ key: String, double value: Double) {
        // The SDK refuses a non-finite number (and the whole event with it): say it in words.
        guard value.isFinite else { return add(key, string: "\(value)") }
        guard let key = admit(key, bytes: 8) else { return }
        parameters[key] = value
    }

    mutating func add(_ key: String, bool value: Bool) {
        guard let key = admit(key, bytes: 1) else { return }
        parameters[key] = value
    }

    mutating func markTruncated() {
        truncated = true
    }

    /// The key to store under, or `nil` if the bounds leave it out.
    private mutating func admit(_ key: String, bytes valueBytes: Int) -> String? {
        guard !isFull else {
            truncated = true
            return nil
        }
        var key = key.isEmpty ? "_" : key
        if fixedKeys.contains(key) || key == "truncated" { key = collisionPrefix + key }
        if key.utf8.count > Self.maxKeyBytes {
            key = Self.cut(key, to: Self.maxKeyBytes)
            truncated = true
        }
        if parameters[key] == nil { added += 1 }
        bytes += key.utf8.count + valueBytes
        return key
    }

    /// `text`'s first `maxBytes` bytes of UTF-8, never splitting a character.
    static func cut(_ text: String, to maxBytes: Int) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxBytes else { return text }
        var end = utf8.index(utf8.startIndex, offsetBy: maxBytes)
        while end > utf8.startIndex, end.samePosition(in: text.unicodeScalars) == nil {
            end = utf8.index(before: end)
        }
        return String(text[..<end])
    }
}
