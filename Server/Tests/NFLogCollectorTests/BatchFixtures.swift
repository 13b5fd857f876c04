import Foundation

/// Batch bodies written by hand from docs/PROTOCOL.md, independent of the SDK's encoder.
enum BatchFixtures {
    static let session = "0193a7c2-0000-7000-8000-000000000001"

    static func point(_ uuid: String = UUID().uuidString.lowercased(), name: String = "ui.tap",
                      parameters: String? = #"{"button":"buy","n":1}"#) -> String {
        var event = #"{"uuid":"\#(uuid)","session":"\#(session)","name":"\#(name)","kind":"point","type":"event","timestamp":1750000000000"#
        if let parameters { event += #","parameters":\#(parameters)"# }
        return event + "}"
    }

    static func span(_ uuid: String = UUID().uuidString.lowercased(), name: String = "net.request") -> String {
        #"{"uuid":"\#(uuid)","session":"\#(session)","name":"\#(name)","kind":"span","type":"network","timestamp":1750000000000,"start":1750000000000,"end":1750000000250,"duration_ms":250.125,"parameters":{"path":"/a"},"end_parameters":{"status":200}}"#
    }

    static func batch(id: String = UUID().uuidString.lowercased(), events: [String]) -> String {
        """
        {"version":1,"batch_id":"\(id)","sent_at":1750000000500,
         "sdk":{"name":"NFLogger","version":"0.1.0"},
         "context":{"app_id":"com.example.shop","app_version":"2.1.0","os_name":"iOS","os_version":"18.1","locale":"en_GB",
                    "sessions":[{"id":"\(session)","started_at":1749999990000}]},
         "events":[\(events.joined(separator: ","))]}
        """
    }
}
