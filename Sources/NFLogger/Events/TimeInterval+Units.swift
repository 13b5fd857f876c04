import Dispatch
import Foundation

/// The SDK counts time in `TimeInterval` seconds, as its public API does (and URLSession):
/// `Duration` and the `Clock` types need iOS 16 / macOS 13, above the SDK's floor. These turn
/// seconds into the whole units that clocks, timers and SQLite take, saturating instead of
/// trapping, since a configuration may hold any number.
extension TimeInterval {
    /// Whole nanoseconds: 0 for negative values and NaN, `UInt64.max` beyond its range.
    var nanoseconds: UInt64 {
        guard self > 0 else { return 0 }  // NaN too
        let scaled = (self * 1e9).rounded(.down)
        return scaled < 0x1p64 ? UInt64(scaled) : .max
    }

    /// Whole milliseconds, rounded toward zero, saturating at the bounds of `Int64`; 0 for NaN.
    var milliseconds: Int64 {
        guard !isNaN else { return 0 }
        let scaled = (self * 1e3).rounded(.towardZero)
        if scaled >= 0x1p63 { return .max }
        if scaled < -0x1p63 { return .min }
        return Int64(scaled)
    }

    /// For a dispatch timer: whole nanoseconds, at most `Int.max` (292 years).
    var dispatchInterval: DispatchTimeInterval {
        .nanoseconds(Int(clamping: nanoseconds))
    }
}
