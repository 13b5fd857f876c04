import Foundation

extension CompletionDispatcher {
    /// A status and the completion it goes to. A struct, not a tuple: an array of tuples holding
    /// a closure and an enum is copied element by element through the runtime's value witnesses.
    struct Finished {
        let completion: LogCompletion
        private let slot: Slot

        /// The status as kept: what nearly every logging call ends with (recorded, disabled,
        /// filtered for a reason without a payload, such as sampled out) held inline, the rest
        /// boxed. A `LogStatus` itself (an enum with strings and errors among its payloads) was
        /// destroyed through the runtime's value witnesses, for each entry, as it ran: the larger
        /// part of what running a Disabled completion cost.
        private enum Slot {
            case recorded(UUID)
            case disabled
            /// An index into ``plainReasons``.
            case filtered(UInt8)
            case other(Boxed)
        }

        /// The filter reasons without a payload, kept inline by their index here.
        private static let plainReasons: [FilterReason] = [
            .notSelected, .denied, .sampledOut, .insidePrivacyZone, .sdkBelowMinimumVersion, .consentDenied, .noOutput,
        ]

        private final class Boxed: Sendable {
            let status: LogStatus
            init(_ status: LogStatus) { self.status = status }
        }

        init(completion: consuming @escaping LogCompletion, status: consuming LogStatus) {
            self.completion = completion
            switch status {
            case .recorded(let id): slot = .recorded(id)
            case .disabled: slot = .disabled
            case .filtered(let reason):
                if let index = Self.plainReasons.firstIndex(of: reason) {
                    slot = .filtered(UInt8(index))
                } else {
                    slot = .other(Boxed(status))
                }
            case .failed: slot = .other(Boxed(status))
            }
        }

        /// Hands the completion its status: each inline case is made where it is passed, so
        /// nothing is left to destroy after the call.
        func run() {
            switch slot {
            case .recorded(let id): completion(.recorded(id))
            case .disabled: completion(.disabled)
            case .filtered(let index): completion(.filtered(Self.plainReasons[Int(index)]))
            case .other(let boxed): completion(boxed.status)
            }
        }
    }
}
