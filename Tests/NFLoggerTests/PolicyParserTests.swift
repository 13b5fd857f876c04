import Foundation
import Testing
@testable import NFLogger
@_spi(NFLogShared) import NFLogSupport

@Suite("Policy documents")
struct PolicyParserTests {
    static let policies = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Policies")

    func parse(_ text: String, now: Date = Date()) throws(PolicyError) -> Policy {
        try Policy.parse(Data(text.utf8), now: now)
    }

    @Test("Every example in Policies/ parses", arguments: ["active", "specific", "disabled", "sampled", "privacy-zones", "aggregated"])
    func examples(name: String) throws {
        let data = try Data(contentsOf: Self.policies.appendingPathComponent("\(name).json"))
        let policy = try Policy.parse(data)
        #expect(policy.version == 1)
        switch name {
        case "active":
            #expect(policy.mode == .active && policy.rules.denies("debug.trace") && !policy.rules.denies("ui.tap"))
            #expect(policy.database == Policy.Database(maxRows: 50_000, maxBytes: 33_554_432, maxAge: 1_209_600))
            #expect(policy.upload.batchMaxEvents == 500 && policy.spanTimeout == 3_600)
        case "specific":
            #expect(policy.kind == .specific && policy.rules.selects("screen.home") && !policy.rules.selects("ui.tap"))
            #expect(policy.rules.denies("form.signup.password"))
        case "disabled":
            #expect(policy.mode == .disabled && policy.refreshInterval == 600)
        case "sampled":
            #expect(policy.rules.samplingRate(for: "net.request") == 0.1 && policy.rules.samplingRate(for: "ui.scroll") == 0.01)
            #expect(policy.rules.samplingRate(for: "ui.tap") == 0.5 && policy.rules.samplingRate(for: "app.launch") == 1)
            #expect(policy.minimumSDKVersion == "0.1.0" && policy.expiresAt != nil)
        case "privacy-zones":
            #expect(policy.privacyZones.count == 2 && policy.privacyZones[0].radius == 250)
        case "aggregated":
            #expect(policy.aggregates.count == 2)
            #expect(policy.aggregates.first?.pattern.matches("perf.frame") == true && policy.aggregates.first?.window == 60)
            #expect(policy.aggregates.first?.dimensions == ["screen"] && policy.aggregates.first?.maxSeries == 2_000)
            #expect(policy.aggregates.last?.window == 300 && policy.aggregates.last?.dimensions == [] && policy.aggregates.last?.maxSeries == 500)
        default:
            Issue.record("no expectations for \(name)")
        }
    }

    @Test("Bad policies are refused with the reason", arguments: [
        ("not json", "invalidJSON"),
        ("[]", "invalidJSON"),
        (#"{"mode":"active"}"#, "version"),
        (#"{"version":2,"mode":"active"}"#, "unsupportedVersion"),
        (#"{"version":1,"mode":"loud"}"#, "unknownMode"),
        (#"{"version":1}"#, "mode"),
        (#"{"version":1,"mode":"active","refersh_interval_s":60}"#, "unknownField refersh_interval_s"),
        (#"{"version":1,"mode":"specific"}"#, "rules.allow"),
        (#"{"version":1,"mode":"specific","rules":{"allow":[]}}"#, "rules.allow"),
        (#"{"version":1,"mode":"active","rules":{"deny":["a..b"]}}"#, "invalidPattern rules.deny[0]"),
        (#"{"version":1,"mode":"active","rules":{"sampling":[{"pattern":"a.*","rate":1.5}]}}"#, "rules.sampling[0].rate"),
        (#"{"version":1,"mode":"active","rules":{"sampling":[{"pattern":"a.*"}]}}"#, "rules.sampling[0].rate"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"perf.*"}]}}"#, "rules.aggregate[0].window_s"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"perf.*","window_s":0}]}}"#, "rules.aggregate[0].window_s"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"perf..x","window_s":60}]}}"#, "invalidPattern rules.aggregate[0].pattern"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"p","window_s":60,"dimensions":["a","a"]}]}}"#, "rules.aggregate[0].dimensions"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"p","window_s":60,"dimensions":[""]}]}}"#, "rules.aggregate[0].dimensions"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"p","window_s":60,"dimensions":["a","b","c","d","e","f","g","h","i"]}]}}"#, "rules.aggregate[0].dimensions"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"p","window_s":60,"max_series":0}]}}"#, "rules.aggregate[0].max_series"),
        (#"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"p","window_s":60,"series":10}]}}"#, "unknownField rules.aggregate[0].series"),
        (#"{"version":1,"mode":"active","upload":{"gzip_level":10}}"#, "upload.gzip_level"),
        (#"{"version":1,"mode":"active","upload":{"interval_s":"30"}}"#, "upload.interval_s"),
        (#"{"version":1,"mode":"active","database":{"max_rows":5}}"#, "database.max_rows"),
        (#"{"version":1,"mode":"active","refresh_interval_s":5}"#, "refresh_interval_s"),
        (#"{"version":1,"mode":"active","min_sdk_version":"one"}"#, "min_sdk_version"),
        (#"{"version":1,"mode":"active","privacy_zones":[{"latitude":91,"longitude":0,"radius_m":10}]}"#, "privacy_zones[0].latitude"),
        (#"{"version":1,"mode":"active","privacy_zones":[{"latitude":1,"longitude":0,"radius_m":0}]}"#, "privacy_zones[0].radius_m"),
        (#"{"version":1,"mode":"active","expires_at":"tomorrow"}"#, "expires_at"),
        (#"{"version":1,"mode":"active","expires_at":"2020-01-01T00:00:00Z"}"#, "expired"),
        // Found by scripts/fuzz: ICU, under ISO8601DateFormatter, died of SIGFPE on this.
        (#"{"version":1,"mode":"active","expires_at":"2030-01-31T00:00:00.\#(String(repeating: "8", count: 100))250+01:00"}"#, "expires_at"),
        (#"{"version":1,"mode":"active","expires_at":"2030-01-31T00:00:00.99999999999Z"}"#, "expires_at"),  // ICU read .012
        (#"{"version":1,"mode":"active","expires_at":"2030-1-1T0:0:0Z"}"#, "expires_at"),
        (#"{"version":1,"mode":"active","expires_at":"22222222222222222222-01-31T00:00:00Z"}"#, "expires_at"),
    ])
    func refusals(text: String, says: String) {
        #expect {
            try parse(text)
        } throws: { error in
            guard let error = error as? PolicyError else { return false }
            switch error {
            case .invalidJSON: return says == "invalidJSON"
            case .unsupportedVersion: return says == "unsupportedVersion"
            case .unknownMode: return says == "unknownMode"
            case .unknownField(let field): return says == "unknownField \(field)"
            case .invalidPattern(let field, _): return says == "invalidPattern \(field)"
            case .invalidField(let field, _): return says == field
            case .expired: return says == "expired"
            default: return false
            }
        }
    }

    @Test("expires_at takes RFC 3339 times, with an offset and up to 9 fraction digits")
    func expiryTimes() throws {
        for (text, seconds) in [("2030-01-31T00:00:00Z", 1_896_048_000.0), ("2030-01-31T00:00:00.250+01:00", 1_896_044_400.25),
                                ("2030-01-31T00:00:00.999999999-00:30", 1_896_049_800.999)] {
            let policy = try parse(#"{"version":1,"mode":"active","expires_at":"\#(text)"}"#, now: Date(timeIntervalSince1970: 0))
            #expect(abs((policy.expiresAt?.timeIntervalSince1970 ?? 0) - seconds) < 0.001, "\(text)")
        }
    }

    @Test("Patterns that expand past 4,096 alternatives are refused: they would run on the app's thread")
    func braceBomb() {
        let group = "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"  // 128 alternatives each
        let deny = (0..<40).map { "\"x\($0).**.\(group)\"" }.joined(separator: ",")
        #expect {
            try parse(#"{"version":1,"mode":"active","rules":{"deny":[\#(deny)]}}"#)
        } throws: { error in
            guard case .invalidField("rules", let reason) = error as? PolicyError else { return false }
            return reason.contains("4096")
        }
    }

    @Test("Only UTF-8 policies are read; nulls and signed versions are refused")
    func encodingAndNulls() throws {
        let utf16 = try #require(#"{"version":1,"mode":"active"}"#.data(using: .utf16))
        #expect(throws: PolicyError.invalidJSON("the policy must be UTF-8")) { try Policy.parse(utf16) }
        #expect(throws: PolicyError.invalidField("rules", reason: "must not be null (leave the field out instead)")) {
            try parse(#"{"version":1,"mode":"active","rules":null}"#)
        }
        #expect(throws: PolicyError.self) { try parse(#"{"version":1,"mode":"active","min_sdk_version":"+1.+0"}"#) }
    }

    @Test("A policy over 64 KiB is refused before it is parsed")
    func tooLarge() {
        let minimal = #"{"version":1,"mode":"active"}"#
        let atLimit = minimal + String(repeating: " ", count: Policy.maxBytes - minimal.utf8.count)
        #expect((try? parse(atLimit)) != nil)
        #expect(throws: PolicyError.tooLarge(bytes: Policy.maxBytes + 1)) { try parse(atLimit + " ") }
    }

    @Test("Versions compare numerically")
    func versions() throws {
        func v(_ text: String) throws -> SemanticVersion { try #require(SemanticVersion(text)) }
        #expect(try v("0.9.0") < v("0.10.0"))
        #expect(try v("1") == v("1.0.0"))
        #expect(try v("2.0.0-beta") == v("2.0.0"))
        #expect(try !(v("1.2.3") < v("1.2.3")))
        for bad in ["", "a.b", "1..2", "1.2.3.4", "-1", "1.2.x"] { #expect(SemanticVersion(bad) == nil, "\(bad)") }
    }

    @Test("Privacy zones use great-circle distance")
    func distances() {
        // Big Ben to the Eiffel Tower: about 340 km.
        let distance = PrivacyZone.distance(fromLatitude: 51.5007, longitude: -0.1246, toLatitude: 48.8584, longitude: 2.2945)
        #expect(abs(distance - 340_500) < 2_000)
        let zone = PrivacyZone(latitude: 51.5007, longitude: -0.1246, radius: 250)
        #expect(zone.contains(latitude: 51.5015, longitude: -0.1246))   // ~90 m north
        #expect(!zone.contains(latitude: 51.5040, longitude: -0.1246))  // ~370 m north
    }
}

@Suite("Sampling")
struct SamplingTests {
    @Test("Across installs, the share sampled in matches the rate (within 4 standard deviations)", arguments: [0.01, 0.1, 0.3, 0.5, 0.9])
    func share(rate: Double) {
        let installs = 20_000
        let inSample = (0..<installs).filter { index in
            Sampling.isSampledIn(seed: Sampling.seed(installID: "install-\(index)"), name: "net.request", rate: rate)
        }.count
        let sigma = (rate * (1 - rate) * Double(installs)).squareRoot()
        #expect(abs(Double(inSample) - rate * Double(installs)) <= 4 * sigma, "\(inSample) of \(installs) at rate \(rate)")
    }

    @Test("The decision is stable for an install and a name, and names are sampled independently")
    func deterministic() {
        let seed = Sampling.seed(installID: "3f0e6a9c-device")
        let names = (0..<1_000).map { "net.call\($0)" }
        let first = names.map { Sampling.isSampledIn(seed: seed, name: $0, rate: 0.5) }
        let again = names.map { Sampling.isSampledIn(seed: Sampling.seed(installID: "3f0e6a9c-device"), name: $0, rate: 0.5) }
        #expect(first == again)
        let share = Double(first.filter { $0 }.count) / Double(names.count)
        #expect(abs(share - 0.5) < 0.07)
        #expect(Sampling.isSampledIn(seed: seed, name: "x", rate: 1) && !Sampling.isSampledIn(seed: seed, name: "x", rate: 0))
    }
}

@Suite("What a policy makes the behaviour decide")
struct PolicyBehaviourTests {
    func policy(_ text: String) throws -> Policy { try Policy.parse(Data(text.utf8)) }

    func decide(_ state: FacadeState, _ name: String) throws -> Admission {
        try state.behaviour.admit(name: name, context: state.context)
    }

    @Test("Deny wins over allow; specific selects; sampling filters")
    func rules() throws {
        let specific = try policy(#"{"version":1,"mode":"specific","rules":{"allow":["ui.**"],"deny":["ui.secret"],"sampling":[{"pattern":"ui.never","rate":0}]}}"#)
        let state = FacadeState(mode: .active, policy: specific, samplingSeed: 42)
        #expect(try decide(state, "ui.tap") == .record)
        #expect(try decide(state, "ui.secret") == .filter(.denied))
        #expect(try decide(state, "ui.never") == .filter(.sampledOut))
        #expect(try decide(state, "net.call") == .filter(.notSelected))
    }

    @Test("The app's mode and the policy's combine: the more restrictive wins, and the policy's rules stay")
    func appAndPolicyModes() throws {
        // An operator's kill switch survives the app setting active.
        var state = FacadeState(mode: .active, policy: try policy(#"{"version":1,"mode":"disabled"}"#), samplingSeed: 1)
        state.setMode(.active)
        #expect(try decide(state, "ui.tap") == .disable)
        // A user's opt-out survives any policy that arrives later.
        state = FacadeState(mode: .active, policy: nil, samplingSeed: 1)
        state.setMode(.disabled)
        state.apply(try policy(#"{"version":1,"mode":"active"}"#))
        #expect(try decide(state, "ui.tap") == .disable)
        #expect(state.mode == .disabled)
        // Both specific: both allow lists must select; the policy's deny applies to the app's choice.
        state = FacadeState(mode: .active, policy: try policy(#"{"version":1,"mode":"specific","rules":{"allow":["ui.**"],"deny":["ui.secret"]}}"#), samplingSeed: 1)
        state.setMode(.specific(try EventRules(allow: ["ui.tap", "ui.secret", "net.*"])))
        #expect(try decide(state, "ui.tap") == .record)
        #expect(try decide(state, "ui.scroll") == .filter(.notSelected))   // the app does not select it
        #expect(try decide(state, "net.call") == .filter(.notSelected))    // the policy does not select it
        #expect(try decide(state, "ui.secret") == .filter(.denied))
        // Reading the mode gives back what the app set, so setting it again changes nothing.
        let before = state.mode
        state.setMode(before)
        #expect(state.mode == before)
        #expect(try decide(state, "ui.secret") == .filter(.denied))
    }

    @Test("The operator's sampling rate is not overridden by the app's rules")
    func policySamplingFirst() throws {
        var state = FacadeState(mode: .active, policy: try policy(#"{"version":1,"mode":"active","rules":{"sampling":[{"pattern":"net.**","rate":0}]}}"#), samplingSeed: 7)
        state.setMode(.specific(try EventRules(allow: ["net.**"], sampling: [("net.**", 1.0)])))
        #expect(try decide(state, "net.call") == .filter(.sampledOut))
    }

    @Test("Below the minimum SDK version everything is filtered with that reason")
    func minimumVersion() throws {
        let state = FacadeState(mode: .active, policy: try policy(#"{"version":1,"mode":"active","min_sdk_version":"99.0"}"#), samplingSeed: 1)
        #expect(try decide(state, "ui.tap") == .filter(.sdkBelowMinimumVersion))
        #expect(state.behaviour.admitSpanEnd(context: state.context) == .filter(.sdkBelowMinimumVersion))
        let current = FacadeState(mode: .active, policy: try policy(#"{"version":1,"mode":"active","min_sdk_version":"\#(NFLogger.sdkVersion)"}"#), samplingSeed: 1)
        #expect(try decide(current, "ui.tap") == .record)
    }

    @Test("Inside a privacy zone nothing is recorded; outside, or with no location, it is")
    func zones() throws {
        var state = FacadeState(mode: .active, policy: try policy(#"{"version":1,"mode":"active","privacy_zones":[{"latitude":10,"longitude":20,"radius_m":100}]}"#), samplingSeed: 1)
        #expect(try decide(state, "ui.tap") == .record)
        state.setLocation((10.0003, 20.0))  // ~33 m away
        #expect(try decide(state, "ui.tap") == .filter(.insidePrivacyZone))
        #expect(state.behaviour.admitSpanEnd(context: state.context) == .filter(.insidePrivacyZone))
        #expect(try decide(state, "not a valid name") == .filter(.insidePrivacyZone))  // not even looked at
        state.setLocation((10.01, 20.0))    // ~1.1 km away
        #expect(try decide(state, "ui.tap") == .record)
        state.setLocation((10.0, 20.0))
        state.apply(nil)  // the policy (and its zones) gone
        #expect(try decide(state, "ui.tap") == .record)
    }

    @Test("outputs.disabled: output ids switched off; a bad id or an unknown field is named")
    func disabledOutputs() throws {
        let parsed = try Policy.parse(Data(#"{"version":1,"mode":"active","outputs":{"disabled":["finance","collector"]}}"#.utf8))
        #expect(parsed.disabledOutputs == ["finance", "collector"])
        #expect(try Policy.parse(Data(#"{"version":1,"mode":"active"}"#.utf8)).disabledOutputs.isEmpty)
        #expect(throws: PolicyError.invalidField("outputs.disabled[1]", reason: "must be an output id: 1–64 characters from a–z, 0–9, _, - and .")) {
            try Policy.parse(Data(#"{"version":1,"mode":"active","outputs":{"disabled":["ok","Not OK"]}}"#.utf8))
        }
        #expect(throws: PolicyError.unknownField("outputs.enabled")) {
            try Policy.parse(Data(#"{"version":1,"mode":"active","outputs":{"enabled":["x"]}}"#.utf8))
        }
    }
}
