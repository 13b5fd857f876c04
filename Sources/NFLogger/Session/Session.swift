import Foundation

/// One foreground session of the app. Immutable; a new session is a new instance.
final class Session: Sendable {
    let id: UUID
    let startedMilliseconds: Int64

    init(id: UUID, startedMilliseconds: Int64) {
        self.id = id
        self.startedMilliseconds = startedMilliseconds
    }
}
