import CollectorTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Uploads that declare 4 MiB and then trickle or stall, held open by a client with the app key
/// (it ships in every app), against `nflog-collector serve` in a process of its own, while an
/// honest client uploads a batch a second from another address: every honest upload must be
/// answered 2xx, and the collector's memory stays bounded. How fast the honest uploads are
/// answered is printed (scripts/probe-slow-uploads measures it against a release build).
@Suite("Slow uploads cannot keep honest ones out", .serialized)
struct SlowUploadFairnessTests {
    static let declared = 4 * 1024 * 1024

    /// A collector process with default limits, except: no rate limit (it is per app key, for the
    /// whole fleet, and the stallers' refused requests would spend the honest client's tokens:
    /// another limit than the one under test), and room for 500 connections, so the 250
    /// stallers hold half of them.
    final class Collector: Sendable {
        let process: ChildProcess
        let port: Int
        let directory: URL

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-slow-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let process = ChildProcess()
            process.executableURL = SeveralCollectorsTests.executable
            process.arguments = ["serve", "--port", "0", "--db", directory.appendingPathComponent("c.sqlite").path,
                                 "--rate-limit", "0", "--max-connections", "500"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let first = await Child.firstLine(of: output)
            guard first.hasPrefix("listening on "), let port = URL(string: String(first.dropFirst("listening on ".count)))?.port else {
                process.terminate()
                throw CollectorProcessError("the collector did not start: \(first)")
            }
            self.process = process
            self.port = port
        }

        /// Resident memory now and at its peak, in MB (/proc/PID/status).
        var memory: (now: Double, peak: Double) {
            let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
            func field(_ name: String) -> Double {
                guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
                      let kilobytes = line.split(separator: " ").compactMap({ Double($0) }).first else { return 0 }
                return kilobytes / 1024
            }
            return (field("VmRSS"), field("VmHWM"))
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// A TCP connection to 127.0.0.1:`port` from `source` (any 127.x.y.z is this machine's on Linux).
    static func connect(port: Int, from source: String, blocking: Bool) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if !blocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, connected == 0 || (!blocking && errno == EINPROGRESS) else {
            close(fd)
            return nil
        }
        return fd
    }

    /// `count` uploads from `sources` (in turn) that each declare 4 MiB: half send 768 KiB at once
    /// and stop (together more than the 64 MiB budget), half trickle 1 KiB every 200 ms (5 KiB/s,
    /// under the minimum rate). An upload
    /// the collector ends (an answer, or its connection closed) is opened again 0.5–1.5 s later,
    /// as an attacker keeping up the pressure would. Runs on a thread of its own until stopped.
    final class Stallers: Sendable {
        private let stopped = Atomic(false)
        private let outcomes = Mutex<[String: Int]>([:])
        private let done = DispatchSemaphore(value: 0)

        init(port: Int, count: Int, sources: [String]) {
            let head = Array("POST /v1/events HTTP/1.1\r\nHost: x\r\nX-NFLog-Key: dev-key\r\nContent-Type: application/json\r\nContent-Length: \(SlowUploadFairnessTests.declared)\r\n\r\n".utf8)
            let burst = head + [UInt8](repeating: 0x20, count: 768 * 1024)
            let trickle = [UInt8](repeating: 0x20, count: 1_024)
            Thread { [self] in
                // What is still to send is a slice of one shared array: no copy per connection.
                struct Slot { var fd: Int32 = -1; var pending: ArraySlice<UInt8> = []; var sent = 0; var reopenAt = Date(); var nextTrickle = Date() }
                var slots = [Slot](repeating: Slot(), count: count)
                var buffer = [UInt8](repeating: 0, count: 256)
                for index in slots.indices { slots[index].reopenAt = Date().addingTimeInterval(Double(index % 50) * 0.01) }
                while !stopped.load(ordering: .relaxed) {
                    let now = Date()
                    for index in slots.indices {
                        var slot = slots[index]
                        let trickles = index % 2 == 1
                        if slot.fd < 0 {
                            if now >= slot.reopenAt, let fd = SlowUploadFairnessTests.connect(port: port, from: sources[index % sources.count], blocking: false) {
                                slot = Slot(fd: fd, pending: trickles ? head[...] : burst[...], sent: 0, reopenAt: now, nextTrickle: now)
                            }
                            slots[index] = slot
                            continue
                        }
                        if slot.pending.isEmpty, trickles, now >= slot.nextTrickle, slot.sent < SlowUploadFairnessTests.declared - 2_048 {
                            slot.pending = trickle[...]
                            slot.nextTrickle = now.addingTimeInterval(0.2)
                        }
                        if !slot.pending.isEmpty {
                            let n = slot.pending.withUnsafeBytes { send(slot.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                            if n > 0 { slot.pending.removeFirst(n); slot.sent += n }
                        }
                        let n = buffer.withUnsafeMutableBytes { recv(slot.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                        // An answer (a refusal), the connection closed, or an error other than "nothing yet".
                        if n >= 0 || ![EAGAIN, EWOULDBLOCK, ENOTCONN].contains(errno) {
                            let outcome = n > 0 ? String(decoding: buffer[0..<min(n, 12)], as: UTF8.self) : "closed"
                            outcomes.withLock { $0[outcome, default: 0] += 1 }
                            close(slot.fd)
                            slot = Slot(reopenAt: now.addingTimeInterval(0.5 + Double.random(in: 0...1)))
                        }
                        slots[index] = slot
                    }
                    usleep(20_000)
                }
                for slot in slots where slot.fd >= 0 { close(slot.fd) }
                done.signal()
            }.start()
        }

        /// Stops and closes them all; what the collector did to them, by answer.
        func stop() async -> [String: Int] {
            stopped.store(true, ordering: .relaxed)
            await Child.offPool { self.done.wait() }
            return outcomes.withLock { $0 }
        }
    }

    /// One honest upload from 127.0.0.1: its status (0: no answer) and how long it took.
    static func honestUpload(port: Int) -> (status: Int, seconds: Double) {
        let session = UUID().uuidString.lowercased()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let body = Array(#"{"version":1,"batch_id":"\#(UUID().uuidString.lowercased())","sent_at":\#(now),"sdk":{"name":"NFLogger","version":"0.1.0"},"context":{"app_id":"p","app_version":"1","os_name":"Linux","os_version":"6","locale":"en","sessions":[{"id":"\#(session)","started_at":\#(now)}]},"events":[{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"honest.upload","kind":"point","type":"event","timestamp":\#(now)}]}"#.utf8)
        let request = Array("POST /v1/events HTTP/1.1\r\nHost: x\r\nX-NFLog-Key: dev-key\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        let start = Date()
        guard let fd = connect(port: port, from: "127.0.0.1", blocking: true) else { return (0, Date().timeIntervalSince(start)) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: Int(hangLimit.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let seconds = Date().timeIntervalSince(start)
        guard n >= 12 else { return (0, seconds) }
        return (Int(String(decoding: buffer[9..<12], as: UTF8.self)) ?? 0, seconds)
    }

    /// The stall from `sources`, and meanwhile 15 honest uploads a second apart (the first once
    /// the stallers have had 3 s to take what they can).
    func run(_ name: String, sources: [String]) async throws {
        let collector = try await Collector()
        defer { collector.stop() }
        let stallers = Stallers(port: collector.port, count: 250, sources: sources)
        try await Task.sleep(for: .seconds(3))
        var answers: [(status: Int, seconds: Double)] = []
        var peakSampled = 0.0
        for _ in 0..<15 {
            let started = ContinuousClock.now
            answers.append(await Child.offPool { Self.honestUpload(port: collector.port) })
            peakSampled = max(peakSampled, collector.memory.now)
            try await Task.sleep(until: started + .seconds(1))
        }
        let memory = collector.memory
        let staller = await stallers.stop()
        let times = answers.map(\.seconds).sorted()
        let p99 = times[min(times.count - 1, Int((Double(times.count) * 0.99).rounded(.up)) - 1)]
        var statuses: [Int: Int] = [:]
        for answer in answers { statuses[answer.status, default: 0] += 1 }
        print("""
            slow uploads (\(name), 250 stallers from \(sources.count) address(es)): honest statuses \(statuses), \
            p50 \(Int(times[times.count / 2] * 1000)) ms, p99 \(Int(p99 * 1000)) ms; collector RSS peak \(Int(memory.peak)) MB \
            (sampled \(Int(peakSampled)) MB); stallers' outcomes \(staller)
            """)
        #expect(answers.allSatisfy { (200..<300).contains($0.status) }, "honest answers: \(statuses)")
        // A generous bound for a debug build: without the budget, 250 bodies of 4 MiB would be 1 GB.
        #expect(memory.peak < 400, "the collector's peak RSS was \(memory.peak) MB")
    }

    @Test("250 stalled 4 MiB uploads from one address: every honest upload from another is answered 2xx, memory stays bounded")
    func oneAddress() async throws {
        try await run("one address", sources: ["127.0.0.2"])
    }

    @Test("250 stalled 4 MiB uploads spread over 16 addresses, half the connections: every honest upload is answered 2xx, memory stays bounded")
    func sixteenAddresses() async throws {
        try await run("16 addresses", sources: (2...17).map { "127.0.0.\($0)" })
    }
}
