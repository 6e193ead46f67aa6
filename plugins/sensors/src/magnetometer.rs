//! Magnetometer: the world's magnetic field in the sensor frame.

use crate::config::{Common, ConfigError};
use crate::noise::Noise;
use crate::system::{Sample, Setup};
use plugin_api::components::MagneticField;
use plugin_api::math::{Pose, Vec3};
use plugin_api::msgs::{Magnetometer as MagnetometerMsg, Vector3d};
use plugin_api::{EcmRead, EntityId, Publisher, TopicOptions};

/// SDFormat's default field, tesla, world frame.
pub const DEFAULT_FIELD: Vec3 = Vec3 { x: 5.5645e-6, y: 22.8758e-6, z: -42.3884e-6 };

/// A magnetometer.
pub struct Magnetometer {
    link: EntityId,
    offset: Pose,
    world: EntityId,
    noise: [Noise; 3],
    publisher: Publisher<MagnetometerMsg>,
}

impl Magnetometer {
    /// Reads `<magnetometer>` (`<x|y|z><noise>`).
    pub fn new(common: &Common, topic: &str, s: &mut Setup<'_, '_>) -> Result<Magnetometer, ConfigError> {
        let what = common.what();
        let block = common.block(&["magnetometer"]);
        let mut noise =
            [Noise::at(block, &["x"], &what)?, Noise::at(block, &["y"], &what)?, Noise::at(block, &["z"], &what)?];
        noise.iter_mut().for_each(|n| n.start(s.rng));
        let link = s.ecm.parent(s.entity).ok_or_else(|| ConfigError("has no parent link".into()))?;
        let offset = s.ecm.get::<Pose>(s.entity).unwrap_or(Pose::IDENTITY);
        let publisher = s.host.advertise(topic, TopicOptions::default()).map_err(|e| ConfigError(e.0))?;
        Ok(Magnetometer { link, offset, world: s.world, noise, publisher })
    }

    /// Publishes one sample.
    pub fn sample(&mut self, _: EntityId, s: &mut Sample<'_, '_>) -> plugin_api::Result {
        let q = (crate::frames::world_pose(s.ecm, self.link) * self.offset).rotation;
        let field = s.ecm.get::<MagneticField>(self.world).map(|f| f.0).unwrap_or(DEFAULT_FIELD);
        let b = crate::frames::to_frame(q, field);
        let msg = MagnetometerMsg {
            header: Some(s.header.clone()),
            field_tesla: Some(Vector3d {
                x: self.noise[0].apply(b.x, s.rng),
                y: self.noise[1].apply(b.y, s.rng),
                z: self.noise[2].apply(b.z, s.rng),
                ..Default::default()
            }),
        };
        self.publisher.publish(&msg)?;
        Ok(())
    }
}
