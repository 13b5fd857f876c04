import ArgumentParser
import Foundation
import Logging
import NFLogCollector

@main
struct CollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-collector",
        abstract: "The NFLogger collector: receives gzip batches of events, stores each event once, reports.",
        subcommands: [Serve.self, Export.self])
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the collector's HTTP API. The first line printed is the base URL (\"listening on http://…\").")

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port: Int = 8080

    @Option(help: "The SQLite database file (created if missing).")
    var db: String

    @Option(help: "A JSON file of accepted app keys: {\"keys\": [{\"app\": \"…\", \"key\": \"…\"}]}. Without it: development mode, key dev-key, loopback only.")
    var keys: String?

    @Option(help: "The address to bind.")
    var host: String = "127.0.0.1"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var configuration = CollectorConfiguration()
        configuration.host = host
        configuration.port = port
        if let keys {
            configuration.keys = try AppKeys(contentsOf: URL(fileURLWithPath: keys))
        } else {
            FileHandle.standardError.write(Data("""
                ************************************************************************
                * DEVELOPMENT MODE: no --keys file. The only accepted app key is       *
                * "dev-key", and the collector listens on loopback only.               *
                ************************************************************************

                """.utf8))
        }
        let store = try SQLiteEventStore(path: db)
        let server = try CollectorServer(configuration: configuration, store: store)
        try await server.run(handleSignals: true) { url in
            // The contract: this is the first line on stdout. Written straight to the file descriptor
            // (no stdio buffer), so a script reading a pipe sees it at once.
            FileHandle.standardOutput.write(Data("listening on \(url.absoluteString)\n".utf8))
        }
        await store.close()
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every stored event as one JSON object per line, with its uuid.")

    @Option(help: "The collector's SQLite database file.")
    var db: String

    @Option(help: "Only the events of this app.")
    var app: String?

    func run() async throws {
        guard FileManager.default.fileExists(atPath: db) else {
            throw ValidationError("no database at \(db)")
        }
        let store = try SQLiteEventStore(path: db)
        let output = FileHandle.standardOutput
        try await store.exportEvents(app: app) { line in output.write(Data(line)) }
        await store.close()
    }
}
