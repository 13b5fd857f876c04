public import Foundation

/// A started span. End it once with ``end(parameters:completion:)``.
///
/// If the start was not recorded (the SDK was disabled, the rules filtered it, or it failed),
/// ending the handle completes with the same answer and stores nothing.
public struct SpanHandle: Sendable {
    /// The span's id: pass it to ``NFLogger/endEvent(id:parameters:completion:)`` if you cannot
    /// keep the handle.
    public let id: UUID
    /// The span's name.
    public let name: String
    let start: Start
    let logger: NFLogger

    enum Start: Sendable {
        case started
        case filtered(FilterReason)
        case disabled
        /// The start failed (bad input, backpressure): there is no span to end.
        case notStored

        init(refusal: LogStatus) {
            switch refusal {
            case .filtered(let reason): self = .filtered(reason)
            case .disabled: self = .disabled
            case .recorded, .failed: self = .notStored
            }
        }
    }

    /// Ends the span. Parameters follow the rules of
    /// ``NFLogger/logEvent(name:type:parameters:completion:)`` and are kept beside the start's.
    public func end(parameters: LogParameters = [:], completion: LogCompletion? = nil) {
        switch start {
        case .started: logger.endEvent(id: id, parameters: parameters, completion: completion)
        case .filtered(let reason): logger.completions.finish(.filtered(reason), completion)
        case .disabled: logger.completions.finish(.disabled, completion)
        case .notStored: logger.completions.finish(.failed(.unknownSpan(id)), completion)
        }
    }
}
