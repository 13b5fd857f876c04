/// `MAJOR.MINOR.PATCH`, compared numerically (a missing part counts as 0; pre-release suffixes
/// such as `-beta` are ignored for the comparison).
@_spi(NFLogShared) public struct SemanticVersion: Comparable, Sendable, CustomStringConvertible {
    let parts: [Int]

    @_spi(NFLogShared) public init?(_ text: String) {
        let core = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
        let pieces = core.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(pieces.count) else { return nil }
        var parts: [Int] = []
        for piece in pieces {
            guard !piece.isEmpty, piece.count <= 9, piece.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let value = Int(piece) else { return nil }
            parts.append(value)
        }
        while parts.count < 3 { parts.append(0) }
        self.parts = parts
    }

    @_spi(NFLogShared) public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool { lhs.parts.lexicographicallyPrecedes(rhs.parts) }

    @_spi(NFLogShared) public var description: String { parts.map(String.init).joined(separator: ".") }
}
