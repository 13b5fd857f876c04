@_spi(NFLogShared) import NFLogSupport
extension Batch.Event {
    /// For a use case (a span of type `usecase`): whether it was given up, which the report counts
    /// as abandoned: closed by the SDK (``abandoned``), or ended by the app with `completed`
    /// false, 0 or `"false"` in its end parameters. `nil` for every other event.
    ///
    /// The one rule for both stores' `given_up` column and the rollups.
    var givenUp: Bool? {
        guard kind == .span, type == "usecase" else { return nil }
        if abandoned { return true }
        guard let endParameters, endParameters.utf8.contains(UInt8(ascii: "c")),
              case .object(let object)? = try? JSONParser.parse(Array(endParameters.utf8)) else { return false }
        switch object["completed"] {
        case .bool(false)?: return true
        case .number(let number)?: return number.double == 0
        case .string("false")?: return true
        default: return false
        }
    }
}
