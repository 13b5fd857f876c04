/// Whether the current thread or task is inside a call the log handler made into the SDK: a
/// record logged from there (the SDK's own warning through a handler the app installed, a
/// completion logging synchronously) is dropped instead of looping. A task-local value also works
/// in synchronous code without a task (it then lives on the thread).
enum RecursionGuard {
    @TaskLocal static var isInsideSDK = false
}
