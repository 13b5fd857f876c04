import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files holding secrets: created readable by their owner only, never overwritten.
enum SecretFile {
    static func create(_ path: String, contents: String) throws {
        // O_EXCL: never overwrite a key (nor follow a file created meanwhile); 0600 from the start.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw ValidationError(errno == EEXIST ? "\(path) exists; refusing to overwrite a key" : "cannot create \(path)")
        }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw ValidationError("cannot write \(path)") }
    }
}
