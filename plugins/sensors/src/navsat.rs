//! NavSat: latitude, longitude and altitude of the sensor from the world's spherical
//! coordinates (WGS84), and its velocity in the east-north-up frame.

use crate::config::{Common, ConfigError};
use crate::motion::{self, ensure};
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::components::{SphericalCoordinates, WorldAngularVelocity, WorldLinearVelocity};
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs::NavSat as NavSatMsg;
use plugin_api::{log, EcmRead, EntityId, Publisher, TopicOptions};

/// WGS84 semi-major axis, m.
const A: f64 = 6_378_137.0;
/// WGS84 flattening.
const F: f64 = 1.0 / 298.257_223_563;

/// Geodetic (lat, lon in radians, height in m) → earth-centred earth-fixed, m.
pub fn ecef(lat: f64, lon: f64, h: f64) -> [f64; 3] {
    let e2 = F * (2.0 - F);
    let n = A / (1.0 - e2 * lat.sin().powi(2)).sqrt();
    [(n + h) * lat.cos() * lon.cos(), (n + h) * lat.cos() * lon.sin(), (n * (1.0 - e2) + h) * lat.sin()]
}

/// Earth-centred earth-fixed → geodetic (lat, lon in radians, height), by fixed-point
/// iteration on the latitude (converges to well under a millimetre near the surface).
pub fn geodetic(p: [f64; 3]) -> (f64, f64, f64) {
    let e2 = F * (2.0 - F);
    let lon = p[1].atan2(p[0]);
    let r = (p[0] * p[0] + p[1] * p[1]).sqrt();
    let mut lat = p[2].atan2(r * (1.0 - e2));
    let mut h = 0.0;
    for _ in 0..10 {
        let n = A / (1.0 - e2 * lat.sin().powi(2)).sqrt();
        h = r / lat.cos() - n;
        lat = p[2].atan2(r * (1.0 - e2 * n / (n + h)));
    }
    (lat, lon, h)
}

/// The world origin on the planet, and how the world frame turns into east-north-up.
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    lat: f64,
    lon: f64,
    elevation: f64,
    heading: f64,
}

impl Origin {
    /// From the world's `<spherical_coordinates>`.
    pub fn new(sc: &SphericalCoordinates) -> Origin {
        Origin {
            lat: sc.latitude_deg.to_radians(),
            lon: sc.longitude_deg.to_radians(),
            elevation: sc.elevation,
            heading: sc.heading_deg.to_radians(),
        }
    }
    /// A world-frame vector in east-north-up: the world frame is ENU turned by the heading
    /// about up.
    pub fn enu(&self, v: Vec3) -> Vec3 {
        let (s, c) = self.heading.sin_cos();
        Vec3::new(c * v.x - s * v.y, s * v.x + c * v.y, v.z)
    }
    /// A world position as (latitude °, longitude °, altitude m).
    pub fn geodetic(&self, p: Vec3) -> (f64, f64, f64) {
        let e = self.enu(p);
        let o = ecef(self.lat, self.lon, self.elevation);
        let (sl, cl) = self.lat.sin_cos();
        let (so, co) = self.lon.sin_cos();
        // ENU axes in ECEF.
        let east = [-so, co, 0.0];
        let north = [-sl * co, -sl * so, cl];
        let up = [cl * co, cl * so, sl];
        let q = [0, 1, 2].map(|i| o[i] + e.x * east[i] + e.y * north[i] + e.z * up[i]);
        let (lat, lon, h) = geodetic(q);
        (lat.to_degrees(), lon.to_degrees(), h)
    }
}

/// A NavSat sensor.
pub struct NavSat {
    link: EntityId,
    offset: Pose,
    world: EntityId,
    /// `<position_sensing><horizontal|vertical><noise>`, m (horizontal applies east and north).
    position_noise: [Noise; 2],
    /// `<velocity_sensing><horizontal|vertical><noise>`, m/s.
    velocity_noise: [Noise; 2],
    frame: String,
    publisher: Publisher<NavSatMsg>,
}

impl NavSat {
    /// Reads `<navsat>` (or `<gps>`): its noise blocks.
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<NavSat, ConfigError> {
        let what = common.what();
        let block = common.block(&["navsat", "gps"]);
        let mut position_noise = [
            Noise::at(block, &["position_sensing", "horizontal"], &what)?,
            Noise::at(block, &["position_sensing", "vertical"], &what)?,
        ];
        let mut velocity_noise = [
            Noise::at(block, &["velocity_sensing", "horizontal"], &what)?,
            Noise::at(block, &["velocity_sensing", "vertical"], &what)?,
        ];
        position_noise.iter_mut().chain(velocity_noise.iter_mut()).for_each(|n| n.start(s.rng));
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        ensure::<WorldLinearVelocity>(s.ecm, link).map_err(|e| ConfigError(e.to_string()))?;
        ensure::<WorldAngularVelocity>(s.ecm, link).map_err(|e| ConfigError(e.to_string()))?;
        let sc = s.ecm.get::<SphericalCoordinates>(s.world).unwrap_or_default();
        if sc.surface_model != "EARTH_WGS84" {
            log::warn!("{what}: surface model {:?} is not supported; using EARTH_WGS84", sc.surface_model);
        }
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(NavSat {
            link,
            offset,
            world: s.world,
            position_noise,
            velocity_noise,
            frame: common.name.clone(),
            publisher,
        })
    }

    /// Publishes one sample.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let origin = Origin::new(&s.ecm.get::<SphericalCoordinates>(self.world).unwrap_or_default());
        let m = motion::of_sensor(s.ecm, self.link, self.offset);
        let mut p = m.pose.position;
        // Position noise in metres, applied in the world frame before converting.
        p.x = self.position_noise[0].apply(p.x, s.rng);
        p.y = self.position_noise[0].apply(p.y, s.rng);
        p.z = self.position_noise[1].apply(p.z, s.rng);
        let (lat, lon, alt) = origin.geodetic(p);
        let v = origin.enu(m.velocity);
        let msg = NavSatMsg {
            header: Some(s.header.clone()),
            latitude_deg: lat,
            longitude_deg: lon,
            altitude: alt,
            velocity_east: self.velocity_noise[0].apply(v.x, s.rng),
            velocity_north: self.velocity_noise[0].apply(v.y, s.rng),
            velocity_up: self.velocity_noise[1].apply(v.z, s.rng),
            frame_id: self.frame.clone(),
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecef_and_back_is_the_identity_and_a_degree_of_latitude_is_111_km() {
        let (lat, lon, h) = geodetic(ecef(0.7, -1.2, 350.0));
        assert!((lat - 0.7).abs() < 1e-12 && (lon + 1.2).abs() < 1e-12 && (h - 350.0).abs() < 1e-6, "{lat} {lon} {h}");
        let o = Origin::new(&SphericalCoordinates { latitude_deg: 45.0, longitude_deg: 7.0, ..Default::default() });
        let (lat, lon, _) = o.geodetic(Vec3::new(0.0, 111_132.0, 0.0));
        // One degree of latitude at 45° is 111,132 m.
        assert!((lat - 46.0).abs() < 2e-3 && (lon - 7.0).abs() < 1e-9, "{lat} {lon}");
    }
}
