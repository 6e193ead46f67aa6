//! Altimeter: the sensor's height and vertical speed relative to where it started.

use crate::config::{Common, ConfigError};
use crate::motion::{self, ensure};
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::components::{WorldAngularVelocity, WorldLinearVelocity};
use plugin_api::math::Pose;
use plugin_api::msgs::Altimeter as AltimeterMsg;
use plugin_api::{EcmRead, EntityId, Publisher, TopicOptions};

/// An altimeter sensor.
pub struct Altimeter {
    link: EntityId,
    offset: Pose,
    /// The world height of the sensor when it was set up: `vertical_reference`.
    reference: f64,
    position_noise: Noise,
    velocity_noise: Noise,
    publisher: Publisher<AltimeterMsg>,
}

impl Altimeter {
    /// Reads `<altimeter>` (`<vertical_position><noise>`, `<vertical_velocity><noise>`).
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<Altimeter, ConfigError> {
        let what = common.what();
        let block = common.block(&["altimeter"]);
        let mut position_noise = Noise::at(block, &["vertical_position"], &what)?;
        let mut velocity_noise = Noise::at(block, &["vertical_velocity"], &what)?;
        position_noise.start(s.rng);
        velocity_noise.start(s.rng);
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        ensure::<WorldLinearVelocity>(s.ecm, link).map_err(|e| ConfigError(e.to_string()))?;
        ensure::<WorldAngularVelocity>(s.ecm, link).map_err(|e| ConfigError(e.to_string()))?;
        let reference = (crate::frames::world_pose(s.ecm, link) * offset).position.z;
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(Altimeter { link, offset, reference, position_noise, velocity_noise, publisher })
    }

    /// Publishes one sample.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let m = motion::of_sensor(s.ecm, self.link, self.offset);
        let msg = AltimeterMsg {
            header: Some(s.header.clone()),
            vertical_position: self.position_noise.apply(m.pose.position.z - self.reference, s.rng),
            vertical_velocity: self.velocity_noise.apply(m.velocity.z, s.rng),
            vertical_reference: self.reference,
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}
