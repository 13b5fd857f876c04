/// Whether the user agreed to analytics: ``NFLogger/consent``.
///
/// The value persists across restarts (in a file beside the database); until the app first sets
/// it, ``Configuration/initialConsent`` applies.
public enum Consent: String, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// Events are recorded and uploaded: the SDK's behaviour without a consent flow.
    case granted
    /// Events are recorded on the device and held: nothing is uploaded (flushes report
    /// ``UploadError/consentPending``). The rolling limits still apply, and what they drop is
    /// counted as usual. Granting uploads what was held; denying deletes it. A span ended while
    /// consent is pending is held as a whole, its start included (its end carries data logged
    /// without consent). An event logged while pending and not yet written when consent is
    /// denied completes with ``FilterReason/consentDenied``.
    case pending
    /// Nothing is recorded: calls complete with ``FilterReason/consentDenied``. Events held while
    /// consent was pending are deleted. Events recorded while it was granted are still uploaded:
    /// they were recorded with consent.
    case denied

    public var description: String { rawValue }
}
