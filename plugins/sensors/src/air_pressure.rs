//! Air pressure: the standard atmosphere's pressure at the sensor's altitude.

use crate::config::{child_f64, Common, ConfigError};
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::components::Atmosphere;
use plugin_api::math::Pose;
use plugin_api::msgs::FluidPressure;
use plugin_api::{EcmRead, EntityId, Publisher, TopicOptions};

/// Standard gravity, m/s² (the atmosphere model's constant, not the world's gravity).
const G0: f64 = 9.80665;
/// Molar mass of dry air, kg/mol.
const MOLAR_MASS: f64 = 0.028_964_4;
/// Universal gas constant, J/(mol K).
const GAS_CONSTANT: f64 = 8.314_459_8;

/// Pressure (Pa) at `altitude` metres above sea level in a troposphere with sea-level
/// temperature `t0` (K), lapse `gradient` (K/m, negative as temperature falls) and
/// sea-level pressure `p0` (Pa): the barometric formula.
pub fn pressure_at(altitude: f64, t0: f64, gradient: f64, p0: f64) -> f64 {
    if gradient == 0.0 {
        return p0 * (-G0 * MOLAR_MASS * altitude / (GAS_CONSTANT * t0)).exp();
    }
    let t = t0 + gradient * altitude;
    p0 * (t / t0).powf(-G0 * MOLAR_MASS / (GAS_CONSTANT * gradient))
}

/// An air pressure sensor.
pub struct AirPressure {
    link: EntityId,
    offset: Pose,
    world: EntityId,
    /// `<reference_altitude>`: the altitude of the world's origin, m.
    reference_altitude: f64,
    noise: Noise,
    publisher: Publisher<FluidPressure>,
}

impl AirPressure {
    /// Reads `<air_pressure>` (`<reference_altitude>`, `<pressure><noise>`).
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<AirPressure, ConfigError> {
        let what = common.what();
        let block = common.block(&["air_pressure"]);
        let reference_altitude = match block {
            Some(b) => child_f64(b, "reference_altitude", 0.0, &what)?,
            None => 0.0,
        };
        let mut noise = Noise::at(block, &["pressure"], &what)?;
        noise.start(s.rng);
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(AirPressure { link, offset, world: s.world, reference_altitude, noise, publisher })
    }

    /// Publishes one sample.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let z = (crate::frames::world_pose(s.ecm, self.link) * self.offset).position.z;
        let atm = s.ecm.get::<Atmosphere>(self.world).unwrap_or_default();
        let p = pressure_at(self.reference_altitude + z, atm.temperature, atm.temperature_gradient, atm.pressure);
        let msg = FluidPressure {
            header: Some(s.header.clone()),
            pressure: self.noise.apply(p, s.rng),
            variance: self.noise.stddev * self.noise.stddev,
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_atmosphere_matches_its_table() {
        // ICAO standard atmosphere: 101325 Pa at 0 m, 89874.6 Pa at 1000 m, 54019.9 at 5000 m.
        assert!((pressure_at(0.0, 288.15, -0.0065, 101_325.0) - 101_325.0).abs() < 1e-9);
        assert!((pressure_at(1000.0, 288.15, -0.0065, 101_325.0) - 89_874.6).abs() < 1.0);
        assert!((pressure_at(5000.0, 288.15, -0.0065, 101_325.0) - 54_019.9).abs() < 2.0);
    }
}
