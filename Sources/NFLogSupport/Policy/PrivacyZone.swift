import Foundation

/// A circle on the Earth inside which nothing is recorded (a home, a hospital, …).
@_spi(NFLogShared) public struct PrivacyZone: Sendable, Equatable {
    @_spi(NFLogShared) public let latitude: Double
    @_spi(NFLogShared) public let longitude: Double
    /// Metres.
    @_spi(NFLogShared) public let radius: Double
    /// For people reading the policy; not used by the SDK.
    @_spi(NFLogShared) public let name: String?

    @_spi(NFLogShared) public init(latitude: Double, longitude: Double, radius: Double, name: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.name = name
    }

    /// Whether a point lies inside the circle (great-circle distance, haversine formula).
    @_spi(NFLogShared) public func contains(latitude: Double, longitude: Double) -> Bool {
        Self.distance(fromLatitude: self.latitude, longitude: self.longitude, toLatitude: latitude, longitude: longitude) <= radius
    }

    static let earthRadius = 6_371_008.8  // metres, the IUGG mean radius

    /// Metres along the surface between two points given in degrees.
    @_spi(NFLogShared) public static func distance(fromLatitude lat1: Double, longitude lon1: Double, toLatitude lat2: Double, longitude lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }
}
